"""What a run of the graph is handed: LangGraph's runtime context (`context_schema=Context`).

`Context` holds the run's knobs (graph/configuration.py: Studio's form is its JSON schema) and, kept
out of that schema, the running parts the nodes call (`GraphParts`): the composition root
(runtime.py) builds them once per process; tests hand in fakes. A node reads both with
`context_of(runtime, config)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from graph.configuration import Configuration, platform_user
from graph.evidence_store import EvidenceStore
from providers.protocols import ChatChain, QueryEmbedder, Reranker, WebSearcher
from settings import Settings

if TYPE_CHECKING:
    from providers.classifiers.injection import InjectionClassifier
    from providers.classifiers.instruction import InstructionClassifier
    from storage.db import Database


class GraphParts(Protocol):
    """The running parts the nodes use (runtime.Runtime is one; tests build others)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def database(self) -> Database: ...

    @property
    def evidence(self) -> EvidenceStore: ...

    @property
    def embedder(self) -> QueryEmbedder: ...

    @property
    def web(self) -> WebSearcher: ...

    @property
    def guard(self) -> InjectionClassifier: ...

    @property
    def packaged_embedder(self) -> QueryEmbedder: ...

    @property
    def screen(self) -> InstructionClassifier: ...

    def chain(self, order: str = "") -> ChatChain: ...

    def reranker(self, name: str) -> Reranker: ...


class NoParts(RuntimeError):
    """The graph ran without the running parts (a caller skipped graph.context.Context.for_run)."""


class Context(Configuration):
    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)

    # excluded from the JSON schema (Studio's form) and from dumps: objects, not settings
    parts: SkipJsonSchema[Any] = Field(default=None, exclude=True, repr=False)

    @classmethod
    def for_run(cls, parts: GraphParts, overrides: Mapping[str, Any] | None = None) -> Context:
        """The context of one run: the deployment's knobs, `overrides` on top, and the parts."""
        values = {**cls.defaults(parts.settings), **cls.overrides(overrides), "parts": parts}
        return cls.model_validate(values)

    @property
    def running(self) -> GraphParts:
        if self.parts is None:
            raise NoParts("this run has no running parts: build its context with Context.for_run (runtime.py)")
        parts: GraphParts = self.parts  # held as Any: pydantic cannot check a Protocol
        return parts


def context_of(runtime: Runtime[Context], config: RunnableConfig | None = None) -> Context:
    """The run's context, with the identity a LangGraph server verified (if any) in place of the caller's."""
    ctx = runtime.context
    if ctx is None:
        raise NoParts("this run has no context: invoke the graph with context=Context.for_run(...)")
    verified = platform_user((config or {}).get("configurable") or {})
    if verified is not None:  # a LangGraph server verified the token: the caller's owner/user do not count
        ctx = ctx.model_copy(update={"owner_id": verified[0], "user": verified[1]})
    return ctx
