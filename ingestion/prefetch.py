"""Parse and chunk the next file in another process while this one embeds.

Embedding keeps the cores busy for most of a file; parsing (PyMuPDF) and chunking (the tokenizer)
are Python work that would otherwise wait for it. `Prefetcher.start(path, name)` hands the next
file to a one-process pool and `take(path, content_hash)` returns its `Prepared` chunks for
`run_job(..., prepared=...)`, or None when it failed or is for other bytes: the job then parses in
its own process, so errors read exactly as without prefetching.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ingestion.chunk import Chunks, chunk_rows
from ingestion.parse import check_pdf_bytes, parse_pdf

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    content_hash: str
    pages: int
    chunks: Chunks


@functools.cache
def _counter(tokenizer_json: str):  # noqa: ANN202 - a tokenizers.Tokenizer's counting function
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_json)
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count(texts: list[str]) -> list[int]:
        return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)] if texts else []

    return count


def prepare(path: str, title: str, tokenizer_json: str, child_tokens: int, overlap_tokens: int,
            parent_tokens: int) -> Prepared:
    """Parse and chunk one file exactly as run_job does (same tokenizer file, same settings)."""
    data = Path(path).read_bytes()
    check_pdf_bytes(data)
    parsed = parse_pdf(data)
    chunks = chunk_rows(parsed.rows, _counter(tokenizer_json), title=title, child_tokens=child_tokens,
                        overlap_tokens=overlap_tokens, parent_tokens=parent_tokens)
    return Prepared(hashlib.sha256(data).hexdigest(), parsed.pages, chunks)


class Prefetcher:
    """One file ahead, in one worker process (spawned: the parent's ONNX/torch threads stay out of it)."""

    def __init__(self, tokenizer_json: str, *, child_tokens: int, overlap_tokens: int, parent_tokens: int) -> None:
        self._args = (tokenizer_json, child_tokens, overlap_tokens, parent_tokens)
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[str, Future[Prepared]] = {}

    def start(self, path: Path, title: str) -> None:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self._pending[str(path)] = self._pool.submit(prepare, str(path), title, *self._args)

    def take(self, path: Path, content_hash: str) -> Prepared | None:
        future = self._pending.pop(str(path), None)
        if future is None:
            return None
        try:
            prepared = future.result()
        except Exception as exc:  # noqa: BLE001 - the job parses again in process and reports the error
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
