"""uvicorn's HTTP protocol with a deadline on a request's headers.

uvicorn closes a kept-alive connection that sends nothing for `timeout_keep_alive`, but it sets no
timer on a new connection, and any byte (one header line) cancels the keep-alive one: a client that
opens connections and never finishes their headers holds each for good, and past
SERVER_MAX_CONNECTIONS every other user's request answers 503. Here a connection must complete
each request's headers within `timeout_keep_alive` (HEADER_TIMEOUT_S, settings.uvicorn_options)
of being opened or of its previous response ending, else it is closed; the body has its own read
timeout (api/edge.py), and a response being written is never cut.

Each client address may also hold at most CONNECTIONS_PER_ADDRESS connections at once (issue 41:
~1,100 half-open sockets from one address, reopened as the deadline closed them, held every other
user at 503): past it a new connection is answered 503 and closed before anything is read. The
counts live on uvicorn's per-server state; the cap and the trusted proxies (FORWARDED_ALLOW_IPS,
not counted: the edge caps its own clients) come from the app's settings.

`HeaderDeadline` is the httptools parser's when installed, else h11's, as uvicorn's "auto" chooses;
settings.uvicorn_options names it by its import path (uvicorn imports it in each worker process).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 10\r\nContent-Type: application/json\r\n"
           b"Content-Length: 63\r\nConnection: close\r\n\r\n"
           b'{"detail": "too many connections from your address; try again"}')


def _limits(app: Any) -> tuple[int, str]:  # uvicorn's loaded app, middleware around ours
    """CONNECTIONS_PER_ADDRESS and FORWARDED_ALLOW_IPS of the app uvicorn serves (0: no cap)."""
    for _ in range(16):  # uvicorn's middleware each hold the next as `app`
        settings = getattr(getattr(app, "state", None), "settings", None)
        if settings is not None:
            return int(settings.http.connections_per_address), str(settings.gateway.forwarded_allow_ips)
        app = getattr(app, "app", None)
        if app is None:
            break
    return 0, ""


def _trusted(allowed: str) -> tuple[bool, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...], frozenset[str]]:
    """(everyone, networks, other names) of a FORWARDED_ALLOW_IPS list, as uvicorn reads it (a short list,
    read per connection: no cache, which tests/test_runtime.py keeps for the parts runtime.py builds)."""
    entries = [e.strip() for e in allowed.split(",") if e.strip()]
    networks, names = [], set()
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            names.add(entry)
    return "*" in entries, tuple(networks), frozenset(names)


def _is_trusted(host: str, allowed: str) -> bool:
    everyone, networks, names = _trusted(allowed)
    if everyone or host in names:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in networks)


def _counts(state: ServerState) -> Counter[str]:
    counts: Counter[str] | None = getattr(state, "thotqen_by_address", None)
    if counts is None:
        counts = Counter()
        state.thotqen_by_address = counts  # type: ignore[attr-defined]  # one count per uvicorn server
    return counts


class _Deadline:
    """The timer, for either protocol: armed while a request's headers are awaited; and the count of
    the connection against its address."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    timeout_keep_alive: int
    app: Any
    server_state: ServerState
    _header_timer: asyncio.TimerHandle | None = None
    _counted: str | None = None

    def _admit(self) -> bool:
        """Count this connection against its address; past the cap answer 503, close it, False."""
        cap, allowed = _limits(self.app)
        peer = self.transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else None
        if not cap or host is None or _is_trusted(host, allowed):
            return True
        counts = _counts(self.server_state)
        if counts[host] >= cap:
            self.transport.write(REFUSED)
            self.transport.close()
            return False
        counts[host] += 1
        self._counted = host
        return True

    def _release(self) -> None:
        host, self._counted = self._counted, None
        if host is not None:
            counts = _counts(self.server_state)
            counts[host] -= 1
            if counts[host] <= 0:
                del counts[host]

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
        if self._admit():
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
        self._release()
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
            if self._admit():
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
            self._release()
            super().connection_lost(exc)

    HeaderDeadline = HttpToolsHeaderDeadline

