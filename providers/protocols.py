"""What the rest of the code may assume of each running part: small structural types.

The composition root (runtime.py) builds the real parts; tests hand in fakes that satisfy the same
protocols. Nothing here builds anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.runnables import RunnableConfig
    from pydantic import BaseModel

    from providers.embeddings import BatchProgress
    from providers.llm.result import ChainResult, StreamReset
    from providers.web_search import WebResult


class QueryEmbedder(Protocol):
    """Turns a question into the vector the dense search compares with (providers/embeddings.py)."""

    @property
    def identity(self) -> str: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class DocumentEmbedder(QueryEmbedder, Protocol):
    """Also embeds passages in batches, as ingestion does."""

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...

    def embed_documents(self, texts: Sequence[str], progress: BatchProgress | None = None) -> np.ndarray: ...


class Reranker(Protocol):
    """Scores each text's relevance to the query; higher is better (providers/reranker.py)."""

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]: ...


class ChatChain(Protocol):
    """The ordered LLM fallback chain (providers/llm/chain.py): one answer from the first link that gives one."""

    def invoke(self, messages: LanguageModelInput, *, cheap: bool = False, structured: type[BaseModel] | None = None,
               token_probabilities: bool = False, config: RunnableConfig | None = None) -> ChainResult: ...

    def stream(self, messages: LanguageModelInput, *, cheap: bool = False,
               config: RunnableConfig | None = None) -> Iterator[str | StreamReset | ChainResult]: ...

    def prepare(self) -> None:
        """Build what can be built ahead of the first call (SDK clients)."""

    def asks_local_first(self, cheap: bool = False) -> bool:
        """Whether a call goes to the embedded local model first."""


class WebSearcher(Protocol):
    """Web results for a query (providers/web_search.py)."""

    def search(self, query: str, k: int = 5) -> list[WebResult]: ...

    @property
    def available(self) -> bool: ...


class LocalEndpoint(Protocol):
    """Where the embedded model answers, OpenAI-style (providers/local_model.py's servers)."""

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...
