"""The graph over LangServe at /rag: invoke, batch, stream, stream_log, stream_events, schemas, playground.

Every route needs a bearer token. The caller's identity goes into the graph's configuration here
(never from the body: an identity field in the input answers 422, like any unknown field):
retrieval is scoped to their documents in SQL. So is the workspace a run reads: an API key's, when
the key is bound to one, never a `workspace_id` the client puts in the config (422 for anyone,
member or not, so it tells nobody whether a workspace exists). Callers may tune retrieval per request within the
bounds of tunables.py; the rest of the configuration is the server's. The input is validated by
the same text rules as every other route (api/text.py), and every run is a question admitted and
finished by answering/accounting.py: one per input of a batch, streams included. Every run goes to
the answer processes (answering/processes.py) when the server has them: invoke and batch as one
final state, the three streams as the graph's own astream / astream_log / astream_events there,
whose items LangServe then sends as it would have sent them from a run in this process, less
what the check has not passed (graph/unchecked.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableBinding, RunnableConfig
from langchain_core.runnables.utils import gather_with_concurrency
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, with_config
from pydantic.fields import FieldInfo
from typing_extensions import TypedDict

from answering import accounting
from answering.bridge import result_in_thread
from answering.processes import AnswerProcesses, AnswersBusy, Job
from answering.stopping import StopWatch
from api.access import bound, reading
from api.deps import current_user
from api.text import MAX, ChatId, DocumentIds, FilterText, Turn, question_type, unprocessable
from graph.context import GraphParts
from graph.stream import FinalState, run_config, run_context
from graph.unchecked import CheckedOnly
from identity.security import User
from settings import Settings
from tunables import Tunables

log = logging.getLogger(__name__)

BATCH_CONCURRENCY = 4  # graphs of one batch running at once
STREAMS = ("/stream", "/stream_log", "/stream_events")
WORKSPACE_REFUSED = ("not accepted from the client: /rag asks in a workspace with an API key bound to it "
                     "(POST /api/keys with workspace_id)")


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


@with_config(ConfigDict(extra="forbid"))
class HistoryTurn(TypedDict):
    # a TypedDict, not a model: LangServe hands nested models on as objects, the graph wants dicts
    role: Literal["user", "assistant"]
    content: Turn


def served_input(settings: Settings) -> type[BaseModel]:
    """What a caller may send: the graph's input fields, text rules from api/text.py, nothing else
    (an identity, or any unknown field, answers 422)."""
    return create_model(
        "RagInput", __config__=ConfigDict(extra="forbid"),
        question=(question_type(settings.questions.max_chars), ...),
        chat_history=(list[HistoryTurn], Field(default_factory=list, max_length=MAX["history"],
                                               description="earlier turns, oldest first")),
        # empty defaults, not None: the playground's form cannot render a {"type": "null"} branch
        chat_id=(ChatId, Field(default="", description="your thread id, for logs and traces")),
        document_ids=(DocumentIds, Field(default_factory=list,
                                         description="limit retrieval to these documents (empty: all of yours)")),
        company=(FilterText, Field(default="", description="only your documents whose cover names this company "
                                                            "(part of its name, any case; empty: any)")),
        form=(FilterText, Field(default="", description="only documents of this form: 10-K, 10-Q, 8-K, "
                                                         "earnings release (empty: any)")),
        period=(FilterText, Field(default="", description="only documents of this period: FY2022, fiscal 2022, "
                                                           "Q2 2023, 2023 or a date (empty: any)")))


def _with_callback(config: RunnableConfig | None, handler: BaseCallbackHandler) -> RunnableConfig:
    out: RunnableConfig = {**(config or {})}
    callbacks = out.get("callbacks")
    if callbacks is None or isinstance(callbacks, list):
        out["callbacks"] = [*(callbacks or []), handler]
    else:  # a callback manager
        manager = callbacks.copy()
        manager.add_handler(handler, inherit=True)
        out["callbacks"] = manager
    return out


class GraphFailed(Exception):
    """The graph raised while answering; its question is already logged as an error (the server
    answers 500 without the internals, and keeps the connection)."""


Admit = Callable[[RunnableConfig | None, list[int]], list[accounting.Ticket]]


def question_cost(input: Any, config: RunnableConfig | None, settings: Settings) -> int:
    """An input's cost in tokens: its question and the earlier turns the graph will see (the request's
    `history_turns` tunable, else the server's)."""
    plain = input.model_dump() if isinstance(input, BaseModel) else dict(input or {})
    turns = ((config or {}).get("configurable") or {}).get("history_turns", settings.history_turns)
    return accounting.cost(str(plain.get("question") or ""), plain.get("chat_history") or [], int(turns))


class AccountedGraph(RunnableBinding[dict[str, Any], dict[str, Any]]):
    """The graph where every run is a question admitted and finished by answering/accounting.py:
    an invoke, each input of a batch, each stream (stream_log goes through astream)."""

    async def admitted(self, config: RunnableConfig | None, inputs: list[Any]) -> list[accounting.Ticket]:
        raise NotImplementedError  # served_graph's subclass knows the app

    def parts(self) -> GraphParts:
        raise NotImplementedError  # served_graph's subclass knows the app's runtime

    def answers(self) -> AnswerProcesses | None:
        return None  # served_graph's subclass knows the runtime's answer processes

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        [ticket] = await self.admitted(config, [input])
        try:
            return await self._answer(ticket, input, config, **kwargs)
        except AnswersBusy:
            raise  # 503 with Retry-After (server.py)
        except Exception as exc:
            log.exception("/rag: the graph failed")
            raise GraphFailed from exc

    async def abatch(self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None,
                     *, return_exceptions: bool = False, **kwargs: Any) -> list[Any]:
        if not inputs:
            return []
        configs = config if isinstance(config, list) else [config] * len(inputs)
        tickets = await self.admitted(configs[0], inputs)  # all of the batch fits in the hour, or none runs

        async def one(i: int) -> Any:
            try:
                return await self._answer(tickets[i], inputs[i], configs[i], **kwargs)
            except AnswersBusy:
                raise
            except Exception as exc:
                if return_exceptions:
                    return exc
                log.exception("/rag batch: the graph failed")
                raise GraphFailed from exc

        try:
            return await gather_with_concurrency(BATCH_CONCURRENCY, *(one(i) for i in range(len(inputs))))
        finally:
            for ticket in tickets:  # inputs that never started (another one failed first)
                ticket.close("the batch stopped before this input ran", status="cancelled")

    async def astream(self, input: Any, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[Any]:
        async for chunk in self._accounted("astream", super().astream, input, config, **kwargs):
            yield chunk

    # /rag/stream_log: LangServe asks for patches (diff=True) with its name/type/tag filters
    async def astream_log(
            self, input: Any, config: RunnableConfig | None = None,
            **kwargs: Any) -> AsyncIterator[Any]:
        if self.answers() is None:  # in this process Runnable.astream_log runs through astream, accounted there
            checked = CheckedOnly()  # ... but its run log comes from callbacks, not through astream
            async for patch in super().astream_log(input, config, **kwargs):
                if (shown := checked.item(patch)) is not None:
                    yield shown
            return
        async for patch in self._accounted("astream_log", super().astream_log, input, config, **kwargs):
            yield patch

    # the event streams LangServe asks for (v1, v2); its v3 overload, an awaitable, is not served
    async def astream_events(  # type: ignore[override]
            self, input: Any, config: RunnableConfig | None = None,
            **kwargs: Any) -> AsyncIterator[Any]:
        # the binding hands astream_events straight to the graph (not through astream): account here
        async for event in self._accounted("astream_events", super().astream_events, input, config, **kwargs):
            yield event

    async def _submit(self, answers: AnswerProcesses, kind: str, input: Any,
                      config: RunnableConfig | None, options: dict[str, Any] | None = None) -> Job:
        """A run in an answer process, its place awaited fairly among every owner's (answering/places.py);
        a caller that goes away meanwhile leaves the waiting list, or stops the run it started."""
        plain = input.model_dump() if isinstance(input, BaseModel) else input  # RagInput is this app's class
        return await answers.asubmit(kind, plain, config, options)

    async def _answer(self, ticket: accounting.Ticket, input: Any, config: RunnableConfig | None,
                      **kwargs: Any) -> Any:
        """One run of the graph on a thread of its own at BACKGROUND_NICE, as a chat's, /v1's and MCP's
        answers (answering/bridge.py): awaited through the graph's async API, its sync nodes took places
        in asyncio's default pool, which every other user's light work shares."""
        parts, answers = self.parts(), self.answers()
        invoke, context = super().invoke, run_context(parts, config)
        owner = ((config or {}).get("configurable") or {}).get("owner_id")
        async with accounting.running(ticket) as run:
            if answers is not None:  # in an answer process (answering/processes.py); a caller gone stops it
                job = await self._submit(answers, "invoke", input, config)
                run.state = await job.result()
            else:  # a caller gone sets `gone`, which the run's StopWatch sees at its next step
                gone = threading.Event()
                watched = _with_callback(config, StopWatch(gone.is_set))
                run.state = await result_in_thread(lambda: invoke(input, watched, context=context, **kwargs),
                                                   name=f"rag-{owner}", nice=parts.settings.background_nice, gone=gone)
        return run.state

    async def _accounted(self, kind: str, stream: Callable[..., AsyncIterator[Any]], input: Any,
                         config: RunnableConfig | None, **kwargs: Any) -> AsyncIterator[Any]:
        """One stream of the graph as one question; its outcome is read from the root run's final
        state. With answer processes the run is `kind` there (its keyword arguments, LangServe's
        filters, cross with it; the config's callbacks stay here, as for every run there), and a
        client that leaves closes this stream, which stops the run there."""
        [ticket] = await self.admitted(config, [input])
        answers, checked = self.answers(), CheckedOnly()  # nothing the check has not passed is sent
        async with accounting.running(ticket) as run:
            if answers is not None:
                job = await self._submit(answers, kind, input, config, kwargs)
                async with contextlib.aclosing(job.aevents()) as events:
                    async for event, data in events:
                        if event != "chunk":  # "done": the final state
                            run.state = data
                        elif (shown := checked.item(data)) is not None:
                            yield shown
            else:
                final = FinalState()
                async for item in stream(input, _with_callback(config, final),
                                         context=run_context(self.parts(), config), **kwargs):
                    if (shown := checked.item(item)) is not None:
                        yield shown
                run.state = final.state


def served_graph(graph: Any, parts: GraphParts, admit: Admit,
                 answers: AnswerProcesses | None = None) -> RunnableBinding[dict[str, Any], dict[str, Any]]:
    """The graph as LangServe sees it: its configuration schema is the caller's tunables only (with
    the server's values), its input schema the caller's fields only, so LangServe validates both
    (422 naming the field) and the playground shows just these; every run is accounted (`admit`) and
    handed the runtime's `parts` as its context."""
    schema = served_config(parts.settings)
    input_schema = served_input(parts.settings)

    class ServedGraph(AccountedGraph):
        # a class per app, not fields: LangServe re-creates the binding with `self.__class__(...)`
        def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
            return schema

        def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
            return input_schema

        async def admitted(self, config: RunnableConfig | None, inputs: list[Any]) -> list[accounting.Ticket]:
            costs = [question_cost(one, config, parts.settings) for one in inputs]
            return await asyncio.to_thread(admit, config, costs)

        def parts(self) -> GraphParts:
            return parts

        def answers(self) -> AnswerProcesses | None:
            return answers

    return ServedGraph(bound=graph, kwargs={}, config={})


def checked_configurable(configurable: dict[str, Any] | None) -> dict[str, Any]:
    """The caller's tunables; anything out of bounds or unknown answers 422."""
    try:
        return Tunables.model_validate(configurable or {}).model_dump(exclude_unset=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise unprocessable(["config", "configurable", *first["loc"]], first["msg"]) from None


def _member(db: Any, user: User, workspace_id: int) -> None:  # storage.db.Database
    """404 unless the user is a member of the workspace (a stranger's answers like a missing one)."""
    with db.connection() as conn:
        reading(conn, user, workspace_id)


async def rag_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
    """LangServe per-request modifier: bounds, identity from the token, and for a stream an early 429
    or 503 (its response starts before the run is admitted; the admission itself stays atomic)."""
    user = getattr(request.state, "user", None) or await current_user(request)
    app = request.app
    configurable = dict(config.get("configurable") or {})
    # Who asks and where are never the client's to say: the served config schema has no
    # workspace_id, so LangServe answers 422 before this runs; this guard keeps that true should the
    # schema ever gain it. The workspace is the API key's when it is bound to one (docs/teams.md).
    if "workspace_id" in configurable:
        raise unprocessable(["config", "configurable", "workspace_id"], WORKSPACE_REFUSED)
    workspace_id = bound(user, None)
    if workspace_id is not None:  # the key's owner is still a member (removal deletes the key, too)
        await asyncio.to_thread(_member, app.state.db, user, workspace_id)
    run = run_config(owner_id=user.id, user=user.username, tunables=checked_configurable(configurable),
                     workspace_id=workspace_id)
    if request.url.path.endswith(STREAMS):
        await asyncio.to_thread(accounting.check, app.state.db, app.state.settings, owner_id=user.id)
        if (answers := app.state.runtime.answers) is not None:
            answers.check(user.id)  # a full server: 503 with Retry-After, not an error event in a started stream
    return {**config, **run}


def mount(app: FastAPI) -> None:
    from langserve import add_routes

    from graph.builder import graph

    def admit(config: RunnableConfig | None, costs: list[int]) -> list[accounting.Ticket]:
        configurable = (config or {}).get("configurable") or {}
        owner_id = configurable.get("owner_id")
        if owner_id is None:  # rag_config always sets it; refuse rather than run unaccounted
            raise HTTPException(401, "not signed in")
        if (answers := app.state.runtime.answers) is not None:
            answers.check(owner_id)  # a full server: 503 before the question is counted
        return accounting.admit(app.state.db, app.state.settings, owner_id=owner_id, source="rag", count=len(costs),
                                at_once=BATCH_CONCURRENCY, tokens=costs,
                                workspace_id=configurable.get("workspace_id"))  # rag_config's, checked

    rt = app.state.runtime
    add_routes(app, served_graph(graph, rt, admit, rt.answers), path="/rag", per_req_config_modifier=rag_config,
               dependencies=[Depends(current_user)], enable_feedback_endpoint=False,
               enable_public_trace_link_endpoint=False)
