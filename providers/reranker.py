"""Rerankers: score (query, passage) pairs; higher is more relevant.

    make_reranker(mode, model=..., fallback=...) -> Reranker  (runtime.py builds one per name)
    Reranker.name                                 "bge", "dense", "llm" or "none"
    Reranker.rerank(query, texts) -> list[float]  one score per text, same order

RERANKER=bge runs a BGE cross-encoder through FlagEmbedding's FlagReranker from
RERANKER_MODEL (a local path or a hub id already in the local cache: nothing is downloaded).
No package ships BGE reranker weights, so with RERANKER=auto (the default) the product uses
BGE when the weights are there, and otherwise says so once in the log and uses
RERANKER_FALLBACK, chosen by measurement (evals/results/):
  dense  cosine of the packaged MiniLM query/passage embeddings
  llm    the local model's P(yes) for "is this passage relevant?" (slow on CPU)
  none   keep the retriever's order (scores fall with rank)
"""

from __future__ import annotations

import json
import logging
import math
import threading
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from providers.protocols import DocumentEmbedder, LocalEndpoint, Reranker

log = logging.getLogger(__name__)


class NoReranker:
    """The retriever's order, as scores 1, 1/2, 1/3, ... (stable under sorting)."""

    name = "none"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [1.0 / (i + 1) for i in range(len(texts))]


class BGEReranker:
    """A cross-encoder through FlagEmbedding; scores are sigmoid-normalised to 0..1."""

    name = "bge"

    def __init__(self, model: str, max_length: int = 512, batch_size: int = 16) -> None:
        from FlagEmbedding import FlagReranker

        self.model = model
        self._reranker = FlagReranker(model, use_fp16=False, devices="cpu", normalize=True,
                                      max_length=max_length, batch_size=batch_size)
        self._lock = threading.Lock()

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:
            scores = self._reranker.compute_score([(query, text) for text in texts])
        if isinstance(scores, float | int):
            scores = [scores]
        return [float(s) for s in scores]


class DenseReranker:
    """Cosine similarity of MiniLM embeddings (query vs passage), computed on the candidates."""

    name = "dense"

    def __init__(self, embedder: DocumentEmbedder) -> None:
        self._embedder = embedder  # the packaged MiniLM

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        q = self._embedder.embed_query(query)
        docs = self._embedder.embed_documents(list(texts))
        return [float(x) for x in docs @ q]


_YES = {"yes", "Yes", " yes", " Yes", "YES"}
_NO = {"no", "No", " no", " No", "NO"}


class LLMReranker:
    """P(yes) of the local model asked whether the passage helps answer the query."""

    name = "llm"

    def __init__(self, server: LocalEndpoint, max_chars: int = 1500) -> None:
        self._base_url = server.base_url
        self._headers = {"Content-Type": "application/json", "Authorization": f"Bearer {server.api_key}"}
        self.max_chars = max_chars

    def _score(self, query: str, text: str) -> float:
        body = {
            "messages": [
                {"role": "system", "content": "You judge whether a passage contains information that "
                                              "helps answer a question. Reply yes or no."},
                {"role": "user", "content": f"Question: {query}\n\nPassage: {text[: self.max_chars]}\n\n"
                                            "Does the passage help answer the question? yes or no"},
            ],
            "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 10,
        }
        request = urllib.request.Request(f"{self._base_url}/chat/completions", json.dumps(body).encode(),
                                         self._headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            data = json.load(response)
        top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        yes = sum(math.exp(t["logprob"]) for t in top if t["token"] in _YES)
        no = sum(math.exp(t["logprob"]) for t in top if t["token"] in _NO)
        return yes / (yes + no) if yes + no > 0 else 0.0

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [self._score(query, text) for text in texts]


def bge_weights_present(model: str) -> bool:
    """True when `model` is a local directory or a hub id already in the local cache."""
    if Path(model).expanduser().is_dir():
        return True
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model, "config.json")
    except Exception:  # an odd id is simply "not present"
        return False
    return isinstance(found, str)


def build_reranker(mode: str, *, model: str, local: Callable[[], LocalEndpoint] | None = None,
                   packaged: Callable[[], DocumentEmbedder] | None = None) -> Reranker:
    """The reranker called `mode`; `model` is the BGE weights (a local path or a cached hub id); `local`
    starts or finds the embedded model's server (the llm reranker asks it); `packaged` gives the
    packaged MiniLM (the dense reranker's)."""
    mode = mode.strip().lower()
    if mode == "bge":
        return BGEReranker(model)
    if mode == "dense":
        if packaged is None:
            raise ValueError("the dense reranker needs the packaged embedder")
        return DenseReranker(packaged())
    if mode == "llm":
        if local is None:
            raise ValueError("the llm reranker needs the local model's server")
        return LLMReranker(local())
    if mode == "none":
        return NoReranker()
    raise ValueError(f"unknown reranker {mode!r}: use auto, bge, dense, llm or none")


def make_reranker(mode: str, *, model: str, fallback: str, local: Callable[[], LocalEndpoint] | None = None,
                  packaged: Callable[[], DocumentEmbedder] | None = None) -> Reranker:
    """The reranker RERANKER names; "auto" is BGE where its weights are present, else `fallback`."""
    mode = mode.strip().lower()
    if mode == "auto":
        if bge_weights_present(model):
            mode = "bge"
        else:
            mode = fallback
            log.warning("BGE reranker weights not found (RERANKER_MODEL=%s; no package ships them); "
                        "reranking with %r instead (RERANKER_FALLBACK)", model, mode)
    return build_reranker(mode, model=model, local=local, packaged=packaged)
