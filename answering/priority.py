"""Background work at a lower CPU priority than the server's request loop.

Answers (their own threads, answering/bridge.py), ingestion (the in-process worker's threads,
jobqueue/worker.py) and page renders (child processes, api/heavy.py) compete for the same cores as the
event loop that authenticates and serves every light request; under a burst of them the light
requests waited (evals/results/burst.md). On Linux a thread has its own nice value, so the
calling thread alone is lowered; elsewhere the call does nothing. The value is BACKGROUND_NICE
(docs/protection.md#cpu-priority).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading


def lower_priority(nice: int) -> None:
    """Give the calling thread (on Linux; the whole process elsewhere is left alone) at least `nice`.

    Never raises it back: an unprivileged process cannot, and a thread already nicer keeps its value.
    Only for threads that do nothing else afterwards (a pooled thread would keep it for the next task)."""
    if nice <= 0 or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, tid, max(nice, os.getpriority(os.PRIO_PROCESS, tid)))
