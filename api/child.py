"""The loop of a work process (api/heavy.py Children): a fresh interpreter that imports only what
its work needs, then answers calls sent over a socket until the socket closes.

Not multiprocessing's spawn or forkserver: both import the parent's `__main__` in every child (the
CLI, and with it the whole app), and fork would copy a threaded server. Started as
`python -c "from api.child import main; main()" FD NICE MODULE...` (command).
"""

from __future__ import annotations

import importlib
import os
import sys
from multiprocessing.connection import Connection
from typing import Any

from answering.priority import lower_priority


def serve(conn: Connection) -> None:
    """(fn, args) in, ("ok", result) or ("error", exception) out, until the socket closes."""
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        except Exception as exc:  # a call that cannot be unpickled here is its caller's error
            conn.send(("error", RuntimeError(f"the work could not be received: {type(exc).__name__}")))
            continue
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except Exception as exc:  # handed back to the caller, who knows what it means
            answer = ("error", exc)
        try:
            conn.send(answer)
        except Exception as exc:  # an exception that does not pickle: its name does
            conn.send(("error", RuntimeError(f"{type(exc).__name__} (the answer does not pickle)")))


def main() -> None:
    fd, nice, preload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    lower_priority(nice)
    for name in preload:  # imported before "ready": a call's time is its work's alone
        importlib.import_module(name)
    conn = Connection(fd)
    conn.send(("ready", None))
    serve(conn)


def command(fd: int, nice: int, preload: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """The child's command line and environment: this interpreter, with this process's import path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return [sys.executable, "-c", "from api.child import main; main()", str(fd), str(nice), *preload], env
