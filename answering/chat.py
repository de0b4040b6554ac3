"""Answering a chat question: semantic cache, then the graph, streamed as events; saved either way.

`ChatAnswerer.ask` runs in its own thread and pushes (event, data) pairs to `emit`. The caller
admitted the question first (answering/accounting.py: the hourly limit and its query-log row). The
answer, the messages and the row's final state are written by this thread, not by the HTTP response;
a client that disconnects mid-answer stops it (`gone`, as the person's stop does: what was checked
so far is saved, 'stopped'). A run that waits for an answer place sends `queued` ({"position": n},
1: next) at each change. Whatever fails, the row ends in a final state and the client gets a final
event.
Events: `draft` ({"chars": n}: the model is writing, n characters so far; its text is never sent,
as nothing unchecked reaches the screen), `sources` (numbered like the final answer's [n]), `token`...
of the checked answer (its first sentences may come while the model still writes: graph/nodes/early.py),
`reset` (only before any token: what was sent checked stays), then one of `done`, `blocked`, `error`
or `stopped` (the person stopped it: answering/stopping.py; what was checked and sent so far is saved
with status 'stopped', which is nothing when the check had not finished). A regenerated answer is a new
assistant message to the same question (meta `regenerates`: the earlier one's id, which stays in the chat).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from answering.accounting import Ticket
from answering.processes import AnswerProcesses
from answering.stopping import Stopped, StopWatch, chat_stop_watch
from graph.context import GraphParts
from graph.outcome import Outcome
from graph.state import InputState
from graph.state import Turn as ChatTurn
from graph.stream import run_config, run_graph
from settings import Settings
from storage import answer_cache, chats, workspaces
from storage.db import Database

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], None]
CACHED_FIELDS = ("cited", "route", "provider", "rounds", "verification", "calculation")
NOTHING_IN_SCOPE = ("This chat has no documents to answer from: its collection is empty. Add documents to the "
                    "collection, then ask again.")
FINAL_EVENT = {"ok": "done", "blocked": "blocked", "error": "error", "stopped": "stopped"}


@dataclass
class Turn:
    """One question in one chat, from its arrival to its saved answer."""

    owner_id: int
    username: str
    chat_id: uuid.UUID | None  # None: a stateless question (the OpenAI-compatible endpoint), nothing saved
    scope: list[str] | None
    question: str
    emit: Emit
    ticket: Ticket
    source: str = "chat"  # the query log's source, for traces
    history: list[dict[str, str]] = field(default_factory=list)
    stop: StopWatch | None = None
    gone: threading.Event | None = None  # set when the client left: the run stops (as a stop does)
    regenerates: int | None = None  # the assistant message this turn answers again
    workspace_id: int | None = None  # the workspace the question is limited to (None: all the asker reads)
    spaces: list[int] = field(default_factory=list)  # the owners the asker reads, at the moment of asking
    written: str = ""  # the answer streamed so far (what a stop keeps)
    sources: list[Any] = field(default_factory=list)


class ChatAnswerer:
    def __init__(self, parts: GraphParts, answers: AnswerProcesses | None = None) -> None:
        self.parts = parts  # the runtime (runtime.py), or a test's parts with fakes
        self.answers = answers  # where the graph runs: answer processes (answering/processes.py), or here
        self.db: Database = parts.database
        self.settings: Settings = parts.settings

    def ask(self, *, owner_id: int, username: str, chat: dict[str, Any], question: str, emit: Emit,
            ticket: Ticket, regenerate: dict[str, Any] | None = None, gone: threading.Event | None = None) -> None:
        """Answer an admitted question (`ticket`); its row always ends in a final state.
        `regenerate` ({"message_id", "question_id"}): answer that message's question again, as a new
        message, seeing only the turns before it (and never the answer cache). `gone` (set when the
        client left) stops the run as the person's stop does: what was checked is saved, 'stopped'."""
        chat_id: uuid.UUID = chat["id"]
        turn = Turn(owner_id, username, chat_id, None, question, emit, ticket,
                    stop=chat_stop_watch(self.db, chat_id, gone=gone), gone=gone,
                    workspace_id=chat.get("workspace_id"),
                    regenerates=regenerate["message_id"] if regenerate else None)
        with ticket:
            try:
                with self.db.connection() as conn, conn.transaction():
                    turn.history = chats.history(conn, owner_id=owner_id, chat_id=chat_id,
                                                 turns=self.settings.history_turns,
                                                 before=regenerate["question_id"] if regenerate else None)
                    chats.clear_stop(conn, chat_id=chat_id)
                    # a collection's members as they are now: a document added to it later is searched
                    turn.scope = chats.scope_now(conn, owner_id=workspaces.spaces(conn, owner_id, turn.workspace_id),
                                                 chat=chat)
                    if regenerate is None:
                        chats.add_message(conn, owner_id=owner_id, chat_id=chat_id, role="user", content=question)
            except Exception as exc:  # nothing was saved: refuse the turn with the reason
                log.exception("chat %s: the question could not be saved", turn.chat_id)
                ticket.finish(status="error", error=f"{type(exc).__name__}: {exc}")
                emit("error", {"message_id": None, "answer": "", "error": "the question could not be saved; "
                                                                          "nothing was kept, please try again"})
                return
            try:
                self._answer(turn)
            except Stopped:
                self._save(turn, answer=turn.written, status="stopped", citations=turn.sources if turn.written else [],
                           meta={"stopped": True})
            except Exception as exc:  # say so, save it, never leave the client hanging
                log.exception("chat %s: answering failed", turn.chat_id)
                reason = "the answer could not be produced; please try again"
                self._save(turn, answer=reason, status="error", citations=[], meta={"error": type(exc).__name__},
                           error=f"{type(exc).__name__}: {exc}")

    def ask_stateless(self, *, owner_id: int, username: str, question: str, history: list[dict[str, str]],
                      scope: list[str] | None, source: str, emit: Emit, ticket: Ticket,
                      workspace_id: int | None = None, gone: threading.Event | None = None) -> None:
        """The same path for an admitted question that belongs to no chat (the caller keeps the
        history): cache, graph and query log as in `ask`; no message is saved."""
        turns = history[-2 * self.settings.history_turns:] if self.settings.history_turns else []
        turn = Turn(owner_id, username, None, scope, question, emit, ticket, source=source, history=turns,
                    workspace_id=workspace_id, gone=gone, stop=StopWatch(gone.is_set) if gone is not None else None)
        with ticket:
            try:
                self._answer(turn)
            except Stopped:  # the client left: nobody reads what is left of the answer
                ticket.close("the client disconnected", status="cancelled")
            except Exception as exc:  # say so, never leave the client hanging
                log.exception("%s question: answering failed", source)
                self._save(turn, answer="the answer could not be produced; please try again", status="error",
                           citations=[], meta={"error": type(exc).__name__}, error=f"{type(exc).__name__}: {exc}")

    def _answer(self, turn: Turn) -> None:
        s = self.settings
        if turn.scope == []:  # an empty collection (or the documents of a deleted empty one): nothing to search
            turn.ticket.refused = True
            self._save(turn, answer=NOTHING_IN_SCOPE, status="ok", citations=[],
                       meta={"cited": [], "route": "no_documents", "cached": False})
            return
        with self.db.connection() as conn:  # what the asker may read now keys the answer cache
            turn.spaces = workspaces.spaces(conn, turn.owner_id, turn.workspace_id)
        # Only a first question is looked up: a follow-up means something different in each chat.
        first = not turn.history and turn.regenerates is None
        embedding = self.parts.embedder.embed_query(turn.question) if s.cache.enabled and first else None
        if embedding is not None and self._answer_from_cache(turn, embedding):
            return
        outcome = self._run_graph(turn)
        meta = {**outcome.summary(), "cached": False, "standalone_question": outcome.standalone_question}
        for key in ("answer", "citations", "blocked"):
            meta.pop(key)
        if outcome.status == "blocked":
            meta["block_reason"] = outcome.block_reason
        citations = outcome.citations if outcome.status == "ok" else []
        turn.ticket.refused = outcome.refused
        self._save(turn, answer=outcome.answer, status=outcome.status, citations=citations, meta=meta,
                   provider=outcome.provider if outcome.status == "ok" else None,
                   tokens=(outcome.input_tokens, outcome.output_tokens),
                   error=outcome.answer if outcome.status == "error" else None)
        if embedding is not None and outcome.status == "ok" and outcome.cited and outcome.provider:
            with self.db.connection() as conn:
                answer_cache.store(conn, owner_id=turn.owner_id, spaces=turn.spaces, document_ids=turn.scope,
                                   question=turn.question,
                                   embedding=embedding, answer={"answer": outcome.answer, "citations": citations,
                                                                **{k: meta[k] for k in CACHED_FIELDS}})

    def _answer_from_cache(self, turn: Turn, embedding: Any) -> bool:
        s = self.settings
        with self.db.connection() as conn:
            hit = answer_cache.lookup(conn, owner_id=turn.owner_id, spaces=turn.spaces, document_ids=turn.scope,
                                      embedding=embedding, max_distance=s.cache.max_distance,
                                      ttl_hours=s.cache.ttl_hours)
        if hit is None:
            return False
        turn.emit("sources", {"sources": hit["citations"]})
        turn.emit("token", {"token": hit["answer"]})
        meta = {**{k: hit.get(k) for k in CACHED_FIELDS}, "cached": True,
                "cached_question": hit["cached_question"], "cache_distance": hit["cache_distance"]}
        self._save(turn, answer=hit["answer"], status="ok", citations=hit["citations"], meta=meta,
                   provider=hit.get("provider"), cached=True)
        return True

    def _run_graph(self, turn: Turn) -> Outcome:
        # the turns as storage.chats.history and /v1 give them: {"role", "content"} dicts
        inputs: InputState = {"question": turn.question, "chat_history": cast("list[ChatTurn]", turn.history)}
        if turn.chat_id is not None:
            inputs["chat_id"] = str(turn.chat_id)
        if turn.scope:
            inputs["document_ids"] = turn.scope
        config = run_config(owner_id=turn.owner_id, user=turn.username, run_name="thotqen chat",
                            workspace_id=turn.workspace_id,
                            metadata={"chat_id": str(turn.chat_id) if turn.chat_id else None,
                                      "owner_id": turn.owner_id, "source": turn.source})
        if self.answers is not None:  # the process watches the chat's stop mark itself, the client leaving here
            # while the run waits for a place, the client hears where it stands (1: next)
            events = self.answers.stream(inputs, config, turn.chat_id,
                                         notify=lambda n: turn.emit("queued", {"position": n}),
                                         gone=turn.gone.is_set if turn.gone is not None else None)
        else:
            if turn.stop is not None:
                config["callbacks"] = [turn.stop]
            events = run_graph(inputs, config, self.parts)
        streamed, drafted = False, 0
        for kind, data in events:
            if kind == "sources":
                turn.sources = data
                turn.emit("sources", {"sources": data})
            elif kind == "draft_sources":  # what the unchecked draft cites: neither sent nor kept by a stop
                pass
            elif kind == "draft":  # the model's text before the check: only its progress is sent
                drafted += len(data)
                turn.emit("draft", {"chars": drafted})
            elif kind == "token":  # the checked answer (graph/nodes/verify.py)
                turn.written += data
                turn.emit("token", {"token": data})
                streamed = True
            elif kind == "reset" and turn.written:  # what was sent was checked and stays the answer's beginning
                log.info("a provider failed mid-answer after checked sentences were sent: they stay")
            elif kind == "reset":
                turn.written = ""
                turn.emit("reset", {"provider": data, "detail": "the provider failed mid-answer; "
                                                                "another one starts over"})
            else:
                outcome: Outcome = data
        if outcome.status == "ok" and not streamed:  # no model call (nothing relevant): the answer in one piece
            turn.emit("sources", {"sources": outcome.citations})
            turn.emit("token", {"token": outcome.answer})
        return outcome

    def _save(self, turn: Turn, *, answer: str, status: str, citations: list[Any], meta: dict[str, Any],
              provider: str | None = None, cached: bool = False, tokens: tuple[int, int] = (0, 0),
              error: str | None = None) -> None:
        """The assistant message and the finished query-log row, in one transaction; then the final event."""
        meta = {**meta, "latency_ms": turn.ticket.elapsed_ms()}
        if turn.regenerates is not None:
            meta["regenerates"] = turn.regenerates
        with self.db.connection() as conn, conn.transaction():
            # the row first: when a drain ended it already (api/drain.py), the turn's answer is saved
            ours = turn.ticket.finish(status="cancelled" if status == "stopped" else status, conn=conn,
                                      provider=provider, cached=cached, tokens=tokens, error=error)
            message_id = chats.add_message(conn, owner_id=turn.owner_id, chat_id=turn.chat_id, role="assistant",
                                           content=answer, status=status, citations=citations,
                                           meta=meta) if turn.chat_id is not None and ours else None
        payload: dict[str, Any] = {"message_id": message_id, "answer": answer, **meta,
                                   "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}}
        if status in ("ok", "stopped"):
            payload["citations"] = citations
        elif status == "blocked":
            payload["reason"] = meta.get("block_reason") or "blocked by the guardrail"
        else:
            payload["error"] = answer
        turn.emit(FINAL_EVENT[status], payload)
