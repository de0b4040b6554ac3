"""Parse the next file while this one embeds.

Embedding keeps the cores busy for most of a file; parsing (in its sandboxed child process,
ingestion/sandbox.py) would otherwise wait for it. `Prefetcher.start(path)` begins parsing the
next file on a background thread (the work itself runs in the sandbox's process) and
`take(path, content_hash)` returns its `Prepared` result for `run_job(..., prepared=...)`, or None
when it failed or is for other bytes: the job then parses itself, so errors read exactly as
without prefetching.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ingestion.units import Parsed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    content_hash: str
    parsed: Parsed  # what ingestion.sandbox.extract returns


class Prefetcher:
    """One file ahead; `prepare(path)` makes its Prepared (ingestion.pipeline.make_prefetcher)."""

    def __init__(self, prepare: Callable[[Path], Prepared]) -> None:
        self._prepare = prepare
        self._pool: ThreadPoolExecutor | None = None
        self._pending: dict[str, Future[Prepared]] = {}

    def start(self, path: Path) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch")
        self._pending[str(path)] = self._pool.submit(self._prepare, path)

    def take(self, path: Path, content_hash: str) -> Prepared | None:
        future = self._pending.pop(str(path), None)
        if future is None:
            return None
        try:
            prepared = future.result()
        except Exception as exc:  # the job parses again and reports the error itself
            log.debug("prefetch of %s failed (%s); the job parses it itself", path, exc)
            return None
        return prepared if prepared.content_hash == content_hash else None

    def close(self) -> None:
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
