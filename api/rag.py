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
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableBinding
from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo

from api import limits
from api.deps import current_user
from graph.outcome import Outcome
from settings import Settings
from storage import query_log
from storage.db import Database
from tunables import Tunables

log = logging.getLogger(__name__)

def served_tunables(settings: Settings) -> type[Tunables]:
    """The per-request tunables with this server's values as defaults: the playground's form starts
    from what the server would use, and a config sent back unchanged changes nothing. (LangServe
    validates a request's config with this model and hands on every field, set or not.)"""
    fields: dict[str, Any] = {
        name: (info.annotation, FieldInfo.merge_field_infos(info, default=getattr(settings, name)))
        for name, info in Tunables.model_fields.items()}
    return create_model("RagTunables", __base__=Tunables, **fields)


def served_config(settings: Settings) -> type[BaseModel]:
    tunables = served_tunables(settings)
    return create_model("RagConfig", configurable=(tunables, tunables()))


def served_graph(graph: Any, settings: Settings) -> RunnableBinding:  # noqa: ANN401
    """The graph as LangServe sees it: its configuration schema is the caller's tunables only (with
    the server's values), so LangServe validates them (422 with the field and bound) and the
    playground shows just these."""
    schema = served_config(settings)

    class ServedGraph(RunnableBinding):
        # a class per app, not a field: LangServe re-creates the binding with `self.__class__(...)`
        def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
            return schema

    return ServedGraph(bound=graph, kwargs={}, config={})


def checked_configurable(configurable: dict[str, Any] | None) -> dict[str, Any]:
    """The caller's tunables; anything out of bounds or unknown answers 422."""
    try:
        return Tunables.model_validate(configurable or {}).model_dump(exclude_unset=True)
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
        outcome = Outcome.from_state(outputs if isinstance(outputs, dict) else {})
        with self.db.connection() as conn:
            query_log.finish(conn, entry[0], status=outcome.status, latency_ms=(time.perf_counter() - entry[1]) * 1000,
                             provider=outcome.provider, input_tokens=outcome.input_tokens,
                             output_tokens=outcome.output_tokens)

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

    from graph.builder import graph

    add_routes(app, served_graph(graph, app.state.settings), path="/rag", per_req_config_modifier=rag_config,
               dependencies=[Depends(current_user)], enable_feedback_endpoint=False,
               enable_public_trace_link_endpoint=False)
