"""The things nodes call: the LLM chain, embedder, reranker, web search, database.

Built lazily from settings and shared by the process. A caller may hand its own in
`config["configurable"]["services"]` (tests pass scripted chat models this way); any field left
None falls back to the default.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.configuration import Configuration


@dataclass
class Services:
    chain: Any = None  # providers.llm.LLMChain-like: invoke(...), stream(...)
    embedder: Any = None  # embed_query(text) -> vector
    reranker: Any = None  # rerank(query, texts) -> scores
    web: Any = None  # search(query, k) -> [{title, url, content}]
    database: Any = None  # storage.db.Database


_lock = threading.Lock()
_chains: dict[str, Any] = {}


def _chain(order: str) -> Any:  # noqa: ANN401
    from providers.llm import get_chain

    if not order:
        return get_chain()
    with _lock:
        if order not in _chains:
            from settings import get_settings

            _chains[order] = get_chain(get_settings().model_copy(update={"llm_order": order}))
        return _chains[order]


def get_services(config: RunnableConfig | None, cfg: Configuration) -> Services:
    given: Services | None = ((config or {}).get("configurable") or {}).get("services")
    given = given or Services()
    return _Resolved(given, cfg)  # type: ignore[return-value]


class _Resolved:
    """Attribute access that builds a default only when a node actually needs it."""

    def __init__(self, given: Services, cfg: Configuration) -> None:
        self._given = given
        self._cfg = cfg

    @property
    def chain(self) -> Any:  # noqa: ANN401
        return self._given.chain or _chain(self._cfg.llm_order)

    @property
    def embedder(self) -> Any:  # noqa: ANN401
        if self._given.embedder is not None:
            return self._given.embedder
        from providers.embeddings import get_embedder
        from settings import get_settings

        s = get_settings()
        return get_embedder(s.embedding_model_path, s.embedding_batch_size)

    @property
    def reranker(self) -> Any:  # noqa: ANN401
        if self._given.reranker is not None:
            return self._given.reranker
        from providers.reranker import get_reranker
        from settings import get_settings

        return get_reranker(get_settings().model_copy(update={"reranker": self._cfg.reranker}))

    @property
    def web(self) -> Any:  # noqa: ANN401
        if self._given.web is not None:
            return self._given.web
        from providers.web_search import get_web_search

        return get_web_search()

    @property
    def database(self) -> Any:  # noqa: ANN401
        if self._given.database is not None:
            return self._given.database
        from settings import get_settings
        from storage.db import open_database

        return open_database(get_settings())
