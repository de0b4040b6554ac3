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
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from langchain_core.callbacks import BaseCallbackHandler

from api import limits
from api.deps import current_user
from storage import query_log
from storage.db import Database

log = logging.getLogger(__name__)

# Per-request `configurable` keys a caller may set, with inclusive bounds (documented in the README).
BOUNDS: dict[str, tuple[float, float]] = {
    "retrieve_k": (1, 50), "top_k": (1, 20), "dense_weight": (0.0, 10.0), "sparse_weight": (0.0, 10.0),
    "rrf_k": (1, 1000), "candidates": (1, 500), "max_df": (0.01, 1.0), "max_rounds": (0, 3),
    "excerpt_chars": (200, 4000), "history_turns": (0, 10),
}
FLAGS = {"hyde", "web_search"}
# Set by the server only: identity, provider order, reranker and safety switches.
SERVER_KEYS = {"user", "owner_id", "llm_order", "reranker", "guardrail_llm", "screen_chunks", "services"}


def checked_configurable(configurable: dict[str, Any]) -> dict[str, Any]:
    """The caller's tunables, validated: out of bounds or of the wrong type answers 422."""
    out: dict[str, Any] = {}
    for key, value in configurable.items():
        if value is None or key in SERVER_KEYS:
            continue
        if key in FLAGS:
            if not isinstance(value, bool):
                raise HTTPException(422, f"configurable.{key} must be true or false")
            out[key] = value
        elif key in BOUNDS:
            low, high = BOUNDS[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise HTTPException(422, f"configurable.{key} must be a number from {low:g} to {high:g}")
            out[key] = int(value) if isinstance(low, int) and isinstance(high, int) else float(value)
        else:
            raise HTTPException(422, f"configurable.{key} cannot be set per request; allowed: "
                                     f"{', '.join(sorted([*BOUNDS, *FLAGS]))}")
    return out


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
    configurable = checked_configurable(dict(config.get("configurable") or {}))
    configurable.update(owner_id=user.id, user=user.username)
    if app.state.services is not None:
        configurable["services"] = app.state.services
    await asyncio.to_thread(limits.check_questions, app.state.db, app.state.settings, user.id)
    callbacks = list(config.get("callbacks") or [])
    callbacks.append(QueryLogCallback(app.state.db, user.id))
    return {**config, "configurable": configurable, "callbacks": callbacks}


def mount(app: FastAPI) -> None:
    from langserve import add_routes

    from graph.graph import graph

    add_routes(app, graph, path="/rag", per_req_config_modifier=rag_config,
               dependencies=[Depends(current_user)], enable_feedback_endpoint=False,
               enable_public_trace_link_endpoint=False)
