"""Interrupting a model call from outside it: the socket its HTTP request runs on is shut down.

A call that does not stream (grading, the structured calls) gets no callback between its start and
its reply, so a StopWatch could not stop it: a client that left kept the model computing for nobody
until the reply came. Each call now runs inside a `Scope` (providers/llm/cutoff.py); the OpenAI
SDK's HTTP client (`http_client`) opens every connection through `Recording`, which hands the socket
to the scope of the call that opened it. `Scope.interrupt()`, from the thread that waits for the
call, shuts those sockets down: the call's read wakes with an error at once, and the model server
sees its client gone (llama.cpp and vLLM then cancel the request's generation, streamed or not).

Connections are not kept alive between calls (a kept one would carry a later call on a socket
another call's scope holds): one TCP connection per call, nothing against a call of seconds.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import ssl
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("llm_call_scope", default=None)


class Scope:
    """The sockets one call opened; `interrupt` shuts them down (and any it opens later)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.interrupted = False

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Connections opened inside this block (this thread's context) belong to the scope."""
        token = _SCOPE.set(self)
        try:
            yield
        finally:
            _SCOPE.reset(token)

    def opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.interrupted
        if late:
            _shut(sock)

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # shutdown, not close: it wakes a read blocked in another thread, and the peer sees the end
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class Recording(httpcore.NetworkBackend):
    """httpcore's own sockets, each handed to the scope of the call that opens it."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        scope = _SCOPE.get()
        sock = stream.get_extra_info("socket")
        if scope is not None and isinstance(sock, socket.socket):
            scope.opened(sock)
        return stream

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return self._inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class InterruptibleTransport(httpx.HTTPTransport):
    """httpx's transport over `Recording`, with no connection kept between calls."""

    def __init__(self) -> None:
        context = ssl.create_default_context()
        with contextlib.suppress(ImportError):  # the CA bundle httpx itself uses
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
        super().__init__(verify=context)
        # httpx builds its httpcore pool without a way to name the network backend; this one is the same
        # pool (tests/unit/test_llm_interrupt.py checks that a call goes through it)
        self._pool = httpcore.ConnectionPool(ssl_context=context, max_keepalive_connections=0,
                                             network_backend=Recording())


def http_client(timeout_s: float) -> httpx.Client:
    """The sync HTTP client an OpenAI-style SDK is built with, so its calls can be interrupted."""
    return httpx.Client(transport=InterruptibleTransport(), timeout=timeout_s, follow_redirects=True)
