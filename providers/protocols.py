"""What the rest of the code may assume of each running part: small structural types.

The composition root (runtime.py) builds the real parts; tests hand in fakes that satisfy the same
protocols. Nothing here builds anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np


class QueryEmbedder(Protocol):
    """Turns a question into the vector the dense search compares with (providers/embeddings.py)."""

    @property
    def identity(self) -> str: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class DocumentEmbedder(QueryEmbedder, Protocol):
    """Also embeds passages in batches, as ingestion does."""

    @property
    def dimension(self) -> int: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...

    def embed_documents(self, texts: Sequence[str], progress: Any = None) -> np.ndarray: ...  # noqa: ANN401


class Reranker(Protocol):
    """Scores each text's relevance to the query; higher is better (providers/reranker.py)."""

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]: ...


class ChatChain(Protocol):
    """The ordered LLM fallback chain (providers/llm/chain.py): one answer from the first link that gives one."""

    def invoke(self, messages: Any, *, cheap: bool = False, **kwargs: Any) -> Any: ...  # noqa: ANN401

    def stream(self, messages: Any, *, cheap: bool = False, **kwargs: Any) -> Iterator[Any]: ...  # noqa: ANN401


class WebSearcher(Protocol):
    """Web results for a query (providers/web_search.py)."""

    def search(self, query: str, k: int = 5) -> list[Any]: ...


class LocalEndpoint(Protocol):
    """Where the embedded model answers, OpenAI-style (providers/local_model.py's servers)."""

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...
