"""The graph over LangServe at /rag: invoke, batch, stream, stream_events, schemas, playground.

Every route needs a bearer token. The caller's identity goes into the graph's configuration here
(never from the body): retrieval is scoped to their documents in SQL. Callers may tune retrieval
per request within the bounds below; the rest of the configuration is the server's.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableBinding
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api import limits
from api.deps import current_user
from storage import query_log
from storage.db import Database

log = logging.getLogger(__name__)

class Tunables(BaseModel):
    """What a caller may set per request under `config.configurable`; unset keeps the server's setting.

    Everything else in the graph's configuration (identity, provider order, reranker, safety
    switches) is the server's: an unknown key is rejected (422), not silently ignored.
    """

    model_config = ConfigDict(extra="forbid")

    retrieve_k: int | None = Field(None, ge=1, le=50, description="candidates retrieved per round")
    top_k: int | None = Field(None, ge=1, le=20, description="excerpts kept after reranking")
    hyde: bool | None = Field(None, description="embed a hypothetical answer for the dense search")
    dense_weight: float | None = Field(None, ge=0, le=10, description="RRF weight of the dense side")
    sparse_weight: float | None = Field(None, ge=0, le=10, description="RRF weight of the full-text side")
    heading_weight: float | None = Field(None, ge=0, le=10,
                                         description="RRF weight of the statement-heading side (0: off)")
    distinct_pages: bool | None = Field(None, description="keep excerpts from different pages where possible")
    rrf_k: int | None = Field(None, ge=1, le=1000, description="RRF constant")
    fusion: Literal["rrf", "score"] | None = Field(None, description="rank fusion or alpha-weighted scores")
    mode: Literal["hybrid", "dense", "sparse"] | None = Field(None, description="both search sides or one")
    grade: bool | None = Field(None, description="grade excerpts with the LLM (off: all count as relevant)")
    candidates: int | None = Field(None, ge=1, le=500, description="candidates per side before fusion")
    max_df: float | None = Field(None, ge=0.01, le=1.0, description="drop query words held by more chunks")
    max_rounds: int | None = Field(None, ge=0, le=3, description="extra rounds (rewrite, web)")
    web_search: bool | None = Field(None, description="allow the web fallback")
    excerpt_chars: int | None = Field(None, ge=200, le=4000, description="characters of each excerpt shown")
    history_turns: int | None = Field(None, ge=0, le=10, description="chat turns the model sees")


class ServedConfig(BaseModel):
    configurable: Tunables | None = None


class ServedGraph(RunnableBinding):
    """The graph as LangServe sees it: its configuration schema is the caller's tunables only, so
    LangServe validates them (422 with the field and bound) and the playground shows just these."""

    def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
        return ServedConfig


def checked_configurable(configurable: dict[str, Any] | None) -> dict[str, Any]:
    """The caller's tunables without unset keys; anything out of bounds or unknown answers 422."""
    try:
        return Tunables.model_validate(configurable or {}).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise HTTPException(422, f"configurable.{where}: {first['msg']}") from None


class QueryLogCallback(BaseCallbackHandler):
    """One query-log row per root run (a batch has several), finished with status, provider, tokens."""

    def __init__(self, db: Database, owner_id: int) -> None:
        self.db = db
        self.owner_id = owner_id
        self._runs: dict[uuid.UUID, tuple[int, float]] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: uuid.UUID,  # noqa: ANN401
                       parent_run_id: uuid.UUID | None = None, **kwargs: Any) -> None:  # noqa: ANN401
        if parent_run_id is None:
            with self.db.connection() as conn:
                self._runs[run_id] = (query_log.start(conn, owner_id=self.owner_id, source="rag"), time.perf_counter())

    def on_chain_end(self, outputs: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:  # noqa: ANN401
        entry = self._runs.pop(run_id, None)
        if entry is None:
            return
        out = outputs if isinstance(outputs, dict) else {}
        calls = out.get("llm_calls") or []
        failed = any(c.get("node") == "generate" and "error" in c for c in calls)
        status = "blocked" if out.get("blocked") else "error" if failed else "ok"
        tin = sum(int((c.get("llm_usage") or {}).get("input_tokens", 0) or 0) for c in calls)
        tout = sum(int((c.get("llm_usage") or {}).get("output_tokens", 0) or 0) for c in calls)
        with self.db.connection() as conn:
            query_log.finish(conn, entry[0], status=status, latency_ms=(time.perf_counter() - entry[1]) * 1000,
                             provider=out.get("provider"), input_tokens=tin, output_tokens=tout)

    def on_chain_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:  # noqa: ANN401
        entry = self._runs.pop(run_id, None)
        if entry is None:
            return
        with self.db.connection() as conn:
            query_log.finish(conn, entry[0], status="error", latency_ms=(time.perf_counter() - entry[1]) * 1000,
                             error=f"{type(error).__name__}: {error}")


async def rag_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
    """LangServe per-request modifier: bounds, identity from the token, the hourly limit, the query log."""
    user = getattr(request.state, "user", None) or await current_user(request)
    app = request.app
    configurable = checked_configurable(config.get("configurable"))
    configurable.update(owner_id=user.id, user=user.username)
    if app.state.services is not None:
        configurable["services"] = app.state.services
    await asyncio.to_thread(limits.check_questions, app.state.db, app.state.settings, user.id)
    callbacks = list(config.get("callbacks") or [])
    callbacks.append(QueryLogCallback(app.state.db, user.id))
    return {**config, "configurable": configurable, "callbacks": callbacks}


def mount(app: FastAPI) -> None:
    from langserve import add_routes

    from api.playground import served_graph
    from graph.graph import graph

    add_routes(app, served_graph(graph, app.state.settings), path="/rag", per_req_config_modifier=rag_config,
               dependencies=[Depends(current_user)], enable_feedback_endpoint=False,
               enable_public_trace_link_endpoint=False)
