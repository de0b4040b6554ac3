"""Parse a stored file in a child process with a memory cap and a deadline.

Parsers of untrusted files (PyMuPDF, the Office readers, lxml) run C code and can be driven into
huge allocations or very long runs by a crafted file. In a child process they cannot take the
server down: its address space is capped (RLIMIT_AS), it is killed at the deadline, and a crash
or a kill becomes a job that failed with a reason. The child reports progress as JSON lines on
stdout ({"progress": [stage, done, total]}) and ends with {"result": ...} or {"error": ...}.

    python -m ingestion.sandbox PATH FORMAT LIMITS_JSON
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingestion.errors import IngestError
from ingestion.formats import Limits
from ingestion.units import Parsed

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def extract(path: Path, fmt: str, limits: Limits, *, timeout_s: float, memory_mb: int,
            progress: Progress | None = None) -> Parsed:
    """The parsed file, or IngestError saying why not (damaged, too big, too slow, out of memory)."""
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "ingestion.sandbox", str(path), fmt, json.dumps(limits.to_json()), str(memory_mb)]
    root = Path(__file__).resolve().parents[1]
    # A session of its own: the kill at the deadline reaches anything it started.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            cwd=root, env=env, text=True, start_new_session=True)
    timed_out = threading.Event()

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    def deadline() -> None:
        timed_out.set()
        kill()

    timer = threading.Timer(timeout_s, deadline)
    timer.daemon = True
    timer.start()
    stderr_tail: list[str] = []
    drain = threading.Thread(target=lambda: stderr_tail.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    outcome: dict[str, Any] | None = None
    started = time.monotonic()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue  # a library printing to stdout
            if "progress" in message and progress is not None:
                progress(*message["progress"])
            elif "result" in message or "error" in message:
                outcome = message
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            kill()
            proc.wait()
        drain.join(5)
    if timed_out.is_set() and outcome is None:
        raise IngestError(f"reading the file took longer than {timeout_s:g} s (INGEST_TIMEOUT_S) and was stopped; "
                          "split it or raise the limit")
    if outcome is None:
        tail = "".join(stderr_tail)[-2000:]
        if "MemoryError" in tail or "bad_alloc" in tail or "std::bad_alloc" in tail:
            raise IngestError(f"reading the file needed more than {memory_mb} MB of memory (INGEST_MEMORY_MB) "
                              "and was stopped")
        log.warning("parser for %s exited with %s after %.1fs: %s", fmt, proc.returncode,
                    time.monotonic() - started, tail[-500:])
        signal_name = f"signal {-proc.returncode}" if proc.returncode and proc.returncode < 0 else (
            f"exit code {proc.returncode}")
        raise IngestError(f"the {fmt} parser crashed on this file ({signal_name}); the file is probably damaged")
    if "error" in outcome:
        raise IngestError(outcome["error"])
    return Parsed.from_json(outcome["result"])


def _child(path: str, fmt: str, limits_json: str, memory_mb: str) -> int:
    from ingestion import memcap
    from ingestion.formats import parse_file, preload

    preload(fmt)  # the libraries are trusted code: loaded before the cap
    # Capped before any byte of the file is read (the parent's threads make a pre-exec hook unsafe).
    memcap.cap(int(memory_mb))

    def emit(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or done == 0 or now - last[0] > 0.25:
            last[0] = now
            emit({"progress": [stage, done, total]})

    try:
        parsed = parse_file(Path(path), fmt, Limits.from_json(json.loads(limits_json)), progress)
    except IngestError as exc:
        emit({"error": str(exc)})
        return 0
    except MemoryError:
        emit({"error": f"reading the file needed more than {memory_mb} MB of memory (INGEST_MEMORY_MB) "
                       "and was stopped"})
        return 0
    except Exception as exc:  # a parser bug or an unforeseen damage: a reason, not a trace
        logging.exception("parsing failed")
        emit({"error": f"the {fmt} file cannot be read: {type(exc).__name__}: {exc}"})
        return 0
    emit({"result": parsed.to_json()})
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(_child(*sys.argv[1:5]))
