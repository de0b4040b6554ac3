"""The things nodes call: the LLM chain, embedder, reranker, web search, database, classifiers.

Built lazily from settings and shared by the process. A caller may hand its own in
`config["configurable"]["services"]` (tests pass scripted chat models this way); any field left
None falls back to the default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.configuration import Configuration
from providers.classifiers.injection import InjectionClassifier
from providers.classifiers.instruction import InstructionClassifier


@dataclass
class Services:
    chain: Any = None  # providers.llm.LLMChain-like: invoke(...), stream(...)
    embedder: Any = None  # embed_query(text) -> vector
    reranker: Any = None  # rerank(query, texts) -> scores
    web: Any = None  # search(query, k) -> [{title, url, content}]
    database: Any = None  # storage.db.Database
    guard: InjectionClassifier | None = None  # the guardrail's: is the question an attack?
    screen: InstructionClassifier | None = None  # the screen's: is a retrieved sentence an instruction?


@functools.cache
def _chain(order: str) -> Any:  # noqa: ANN401
    """The chain for a provider order a run asked for ("": LLM_ORDER), built once per process."""
    from providers.llm import get_chain

    if not order:
        return get_chain()
    from settings import get_settings

    return get_chain(get_settings().model_copy(update={"llm_order": order}))


@functools.cache
def _guard() -> InjectionClassifier:
    """The shipped guardrail classifier, loaded once per process (its Guardian on first use)."""
    return InjectionClassifier.load()


@functools.cache
def _screen() -> InstructionClassifier:
    """The shipped screening classifier, loaded once per process."""
    return InstructionClassifier.load()


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
        return get_embedder(s.embedding_model_path, s.embedding_batch_size, backend=s.embedding_backend)

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

    @property
    def guard(self) -> InjectionClassifier:
        return self._given.guard if self._given.guard is not None else _guard()

    @property
    def screen(self) -> InstructionClassifier:
        return self._given.screen if self._given.screen is not None else _screen()
