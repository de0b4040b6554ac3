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

# Configuration field -> the settings field that supplies its default.
SETTING_OF = {
    "user": "default_user", "retrieve_k": "graph_retrieve_k", "top_k": "graph_top_k",
    "dense_weight": "dense_weight", "sparse_weight": "sparse_weight", "rrf_k": "rrf_k", "fusion": "fusion",
    "mode": "search_mode", "candidates": "candidates", "max_df": "max_df", "heading_weight": "heading_weight",
    "hyde": "graph_hyde",
    "reranker": "reranker", "grade": "graph_grade", "max_rounds": "graph_max_rounds", "web_search": "web_search",
    "distinct_pages": "graph_distinct_pages",
    "excerpt_chars": "graph_excerpt_chars", "history_turns": "graph_history_turns",
    "guardrail_llm": "guardrail_llm", "screen_chunks": "screen_chunks",
}


def _default(name: str) -> Any:  # noqa: ANN401
    """The settings field's declared default: one source for Studio's form and the runtime."""
    from settings import Settings

    return Settings.model_fields[SETTING_OF[name]].default


@dataclass(kw_only=True)
class Configuration:
    # who is asking: the server sets this from auth; the CLI from --user
    user: str = _default("user")
    owner_id: int | None = None
    # retrieval
    retrieve_k: int = _default("retrieve_k")
    top_k: int = _default("top_k")
    dense_weight: float = _default("dense_weight")
    sparse_weight: float = _default("sparse_weight")
    rrf_k: int = _default("rrf_k")
    fusion: str = _default("fusion")
    mode: str = _default("mode")
    candidates: int = _default("candidates")
    max_df: float = _default("max_df")
    heading_weight: float = _default("heading_weight")
    hyde: bool = _default("hyde")
    reranker: str = _default("reranker")
    distinct_pages: bool = _default("distinct_pages")
    # correction
    grade: bool = _default("grade")
    max_rounds: int = _default("max_rounds")
    web_search: bool = _default("web_search")
    # prompts
    excerpt_chars: int = _default("excerpt_chars")
    history_turns: int = _default("history_turns")
    # providers: "" keeps LLM_ORDER from the environment
    llm_order: str = ""
    # safety
    guardrail_llm: bool = _default("guardrail_llm")
    screen_chunks: bool = _default("screen_chunks")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The environment's values (settings), which override the declared defaults."""
        from settings import get_settings

        settings = get_settings()
        return {name: getattr(settings, setting) for name, setting in SETTING_OF.items()}

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        configurable = (config or {}).get("configurable") or {}
        names = {f.name for f in fields(cls)}
        values = {**cls.defaults(), **{k: v for k, v in configurable.items() if k in names and v is not None}}
        return cls(**values)
