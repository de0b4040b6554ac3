"""One configuration object, read from the RunnableConfig in every node.

Defaults come from settings.py (declared defaults for Studio's form, the environment at run
time); a request overrides any field through `config["configurable"]` (Studio's configuration
panel, LangServe's config, tests). Objects that cannot travel as JSON (a test's scripted chat
model, a database) go in `configurable["services"]` (see graph/services.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from langchain_core.runnables import RunnableConfig


def _default(name: str) -> Any:  # noqa: ANN401
    """The settings field's declared default: one source for Studio's form and the runtime."""
    from settings import Settings

    return Settings.model_fields[name].default


@dataclass(kw_only=True)
class Configuration:
    # who is asking: the server sets this from auth; the CLI from --user
    user: str = _default("default_user")
    owner_id: int | None = None
    # retrieval
    retrieve_k: int = _default("graph_retrieve_k")
    top_k: int = _default("graph_top_k")
    dense_weight: float = _default("dense_weight")
    sparse_weight: float = _default("sparse_weight")
    rrf_k: int = _default("rrf_k")
    candidates: int = _default("candidates")
    max_df: float = _default("max_df")
    hyde: bool = _default("graph_hyde")
    reranker: str = _default("reranker")
    # correction
    max_rounds: int = _default("graph_max_rounds")
    web_search: bool = _default("web_search")
    # prompts
    excerpt_chars: int = _default("graph_excerpt_chars")
    history_turns: int = _default("graph_history_turns")
    # providers: "" keeps LLM_ORDER from the environment
    llm_order: str = ""
    # safety
    guardrail_llm: bool = _default("guardrail_llm")
    screen_chunks: bool = _default("screen_chunks")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        from settings import get_settings

        s = get_settings()
        return {
            "user": s.default_user, "retrieve_k": s.graph_retrieve_k, "top_k": s.graph_top_k,
            "dense_weight": s.dense_weight, "sparse_weight": s.sparse_weight, "rrf_k": s.rrf_k,
            "candidates": s.candidates, "max_df": s.max_df, "hyde": s.graph_hyde, "reranker": s.reranker,
            "max_rounds": s.graph_max_rounds, "web_search": s.web_search,
            "excerpt_chars": s.graph_excerpt_chars, "history_turns": s.graph_history_turns,
            "guardrail_llm": s.guardrail_llm, "screen_chunks": s.screen_chunks,
        }

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        configurable = (config or {}).get("configurable") or {}
        names = {f.name for f in fields(cls)}
        values = {**cls.defaults(), **{k: v for k, v in configurable.items() if k in names and v is not None}}
        return cls(**values)
