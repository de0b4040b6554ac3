"""uvicorn's HTTP protocol with a deadline on a request's headers.

uvicorn closes a kept-alive connection that sends nothing for `timeout_keep_alive`, but it sets no
timer on a new connection, and any byte (one header line) cancels the keep-alive one: a client that
opens connections and never finishes their headers holds each for good, and past
SERVER_MAX_CONNECTIONS every other user's request answers 503. Here a connection must complete
each request's headers within `timeout_keep_alive` (HEADER_TIMEOUT_S, settings.uvicorn_options)
of being opened or of its previous response ending, else it is closed; the body has its own read
timeout (api/edge.py), and a response being written is never cut.

`HeaderDeadline` is the httptools parser's when installed, else h11's, as uvicorn's "auto" chooses;
settings.uvicorn_options names it by its import path (uvicorn imports it in each worker process).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class _Deadline:
    """The timer, for either protocol: armed while a request's headers are awaited."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    timeout_keep_alive: int
    _header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self._header_timer = self.loop.call_later(self.timeout_keep_alive, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class H11HeaderDeadline(_Deadline, H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # a request's headers arrived (or the peer is done)
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:  # no pipelined request parsed already: await the next one's
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


HeaderDeadline: type[asyncio.Protocol]

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools not installed: uvicorn's "auto" uses h11 too
    HeaderDeadline = H11HeaderDeadline
else:

    class HttpToolsHeaderDeadline(_Deadline, HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            waiting = not self.pipeline  # a pipelined request's headers are complete already
            super().on_response_complete()
            if waiting:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    HeaderDeadline = HttpToolsHeaderDeadline

