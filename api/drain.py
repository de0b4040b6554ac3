"""Graceful drain: what a server process does between SIGTERM and its end (issue 40).

uvicorn, on SIGTERM, stops accepting (closes its listening sockets), closes idle keep-alive
connections, lets busy ones finish their response, and after `timeout_graceful_shutdown`
(SHUTDOWN_GRACE_S, settings.uvicorn_options) cancels what still runs; then the app's lifespan ends.
Here:

- sse-starlette's own reaction to SIGTERM (end every event stream at once, 0.2 s after the signal: a
  chat's answer cut into a truncated 200) is turned off, so answer streams (chats, /rag, /v1) run
  to their end within the grace; a job-progress stream, which may follow an ingestion for minutes,
  ends at once instead (api/routes/documents.py reads `STATE.draining`): the client asks again elsewhere;
- `watch` notices uvicorn's exit flag (its signal handler is a bound method of the server: found as
  sse-starlette finds it, which works with `--workers N` too) and marks the process draining:
  /api/ready answers 503 and one line is logged;
- `end_in_flight` (the lifespan's end, after the grace) ends every question this process still has
  open as an error and saves each chat turn among them with an answer that says to ask again
  (answering/accounting.py), before the answer processes are stopped.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("thotqen.drain")
POLL_S = 0.2


@dataclass
class _State:
    draining: bool = False
    since: float | None = None  # time.monotonic() when the drain began


STATE = _State()


def keep_streams_open() -> None:
    """Let SIGTERM leave event streams to uvicorn's graceful timeout (sse-starlette ends them at once by default)."""
    from sse_starlette.sse import AppStatus

    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]


def _uvicorn_server() -> Any | None:  # uvicorn.Server
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    return server if hasattr(server, "should_exit") else None


def begin(grace_s: float) -> None:
    if STATE.draining:
        return
    STATE.draining, STATE.since = True, time.monotonic()
    log.warning("draining: no new connections; answers in progress have %g s (SHUTDOWN_GRACE_S) to finish", grace_s)


async def watch(grace_s: float) -> None:
    """Until the process's uvicorn server is told to exit (a signal), then `begin` the drain."""
    while True:
        server = _uvicorn_server()
        if server is not None and server.should_exit:
            begin(grace_s)
            return
        await asyncio.sleep(POLL_S)
