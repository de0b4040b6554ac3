"""Answering a chat question: semantic cache, then the graph, streamed as events; saved either way.

Runs in its own thread and pushes (event, data) pairs to `emit`. The answer, the messages and the
query-log row are written by this thread, not by the HTTP response, so a client that disconnects
mid-answer loses nothing: the answer is in the chat when it comes back.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from settings import Settings
from storage import answer_cache, chats, query_log
from storage.db import Database

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], None]


def citations_from(excerpts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Numbered like the prompt the model saw, so [n] in the answer resolves to sources[n-1]."""
    return [{"n": n, "document_id": e.get("document_id"), "name": e.get("name") or "", "page": e.get("page"),
             "page_label": e.get("page_label"), "ocr": bool(e.get("ocr")), "boxes": e.get("boxes"),
             "url": e.get("url"), "text": e.get("text") or ""} for n, e in enumerate(excerpts, 1)]


def _tokens(llm_calls: list[dict[str, Any]]) -> tuple[int, int]:
    tin = sum(int((c.get("llm_usage") or {}).get("input_tokens", 0) or 0) for c in llm_calls)
    tout = sum(int((c.get("llm_usage") or {}).get("output_tokens", 0) or 0) for c in llm_calls)
    return tin, tout


class Answerer:
    def __init__(self, db: Database, settings: Settings, services: Any = None) -> None:  # noqa: ANN401
        self.db = db
        self.settings = settings
        self.services = services  # graph.services.Services for tests; None: the product's defaults

    def _embedder(self) -> Any:  # noqa: ANN401
        if self.services is not None and self.services.embedder is not None:
            return self.services.embedder
        from providers.embeddings import get_embedder

        return get_embedder(self.settings.embedding_model_path, self.settings.embedding_batch_size)

    def ask(self, *, owner_id: int, username: str, chat: dict[str, Any], question: str, emit: Emit) -> None:
        started = time.perf_counter()
        chat_id: uuid.UUID = chat["id"]
        scope = [str(d) for d in chat["document_ids"]] if chat["document_ids"] else None
        with self.db.connection() as conn:
            log_id = query_log.start(conn, owner_id=owner_id, source="chat", chat_id=chat_id)
            history = chats.history(conn, owner_id=owner_id, chat_id=chat_id,
                                    turns=self.settings.graph_history_turns)
            chats.add_message(conn, owner_id=owner_id, chat_id=chat_id, role="user", content=question)
        try:
            self._answer(owner_id, username, chat_id, scope, question, history, started, log_id, emit)
        except Exception as exc:  # noqa: BLE001 - say so, save it, never leave the client hanging
            log.exception("chat %s: answering failed", chat_id)
            reason = "the answer could not be produced; please try again"
            with self.db.connection() as conn:
                message_id = chats.add_message(conn, owner_id=owner_id, chat_id=chat_id, role="assistant",
                                               content=reason, status="error", meta={"error": type(exc).__name__})
                query_log.finish(conn, log_id, status="error", latency_ms=(time.perf_counter() - started) * 1000,
                                 error=f"{type(exc).__name__}: {exc}")
            emit("error", {"message_id": message_id, "error": reason})

    def _answer(self, owner_id: int, username: str, chat_id: uuid.UUID, scope: list[str] | None, question: str,
                history: list[dict[str, str]], started: float, log_id: int, emit: Emit) -> None:
        s = self.settings
        # Only a first question is looked up: a follow-up means something different in each chat.
        use_cache = s.answer_cache and not history
        embedding = None
        if use_cache:
            embedding = self._embedder().embed_query(question)
            with self.db.connection() as conn:
                hit = answer_cache.lookup(conn, owner_id=owner_id, document_ids=scope, embedding=embedding,
                                          max_distance=s.answer_cache_max_distance, ttl_hours=s.answer_cache_ttl_hours)
            if hit is not None:
                emit("sources", {"sources": hit["citations"]})
                emit("token", {"token": hit["answer"]})
                meta = {**{k: hit.get(k) for k in ("cited", "route", "provider", "rounds")}, "cached": True,
                        "cached_question": hit["cached_question"], "cache_distance": hit["cache_distance"]}
                self._finish(owner_id, chat_id, log_id, started, hit["answer"], "ok", hit["citations"], meta,
                             provider=hit.get("provider"), cached=True, emit=emit, event="done")
                return

        from graph.graph import graph

        inputs: dict[str, Any] = {"question": question, "chat_history": history, "chat_id": str(chat_id)}
        if scope:
            inputs["document_ids"] = scope
        configurable: dict[str, Any] = {"owner_id": owner_id, "user": username}
        if self.services is not None:
            configurable["services"] = self.services
        config = {"configurable": configurable, "run_name": "thotqen chat",
                  "metadata": {"chat_id": str(chat_id), "owner_id": owner_id}}
        out: dict[str, Any] = {}
        sent_sources = False
        streamed = False
        for mode, chunk in graph.stream(inputs, config, stream_mode=["custom", "values"]):
            if mode == "values":
                out = chunk
            elif "token" in chunk:
                if not sent_sources:
                    emit("sources", {"sources": citations_from(out.get("relevant") or [])})
                    sent_sources = True
                emit("token", {"token": chunk["token"]})
                streamed = True
            elif "reset" in chunk:
                emit("reset", {"provider": chunk["reset"], "detail": "the provider failed mid-answer; "
                                                                      "another one starts over"})
        answer = out.get("answer") or ""
        llm_calls = out.get("llm_calls") or []
        tin, tout = _tokens(llm_calls)
        meta = {"cited": out.get("cited") or [], "route": out.get("route") or [], "provider": out.get("provider"),
                "rounds": out.get("rounds") or 0, "cached": False,
                "timings": out.get("timings") or {}, "standalone_question": out.get("standalone_question")}
        if out.get("blocked"):
            meta["block_reason"] = out.get("block_reason")
            self._finish(owner_id, chat_id, log_id, started, answer, "blocked", [], meta, provider=None,
                         cached=False, emit=emit, event="blocked", tokens=(tin, tout))
            return
        citations = list(out.get("citations") or [])
        if any(c.get("node") == "generate" and "error" in c for c in llm_calls):
            self._finish(owner_id, chat_id, log_id, started, answer, "error", [], meta, provider=None, cached=False,
                         emit=emit, event="error", tokens=(tin, tout))
            return
        if not sent_sources:
            emit("sources", {"sources": citations})
        if not streamed:
            emit("token", {"token": answer})
        self._finish(owner_id, chat_id, log_id, started, answer, "ok", citations, meta,
                     provider=out.get("provider"), cached=False, emit=emit, event="done", tokens=(tin, tout))
        if use_cache and embedding is not None and meta["cited"] and out.get("provider"):
            with self.db.connection() as conn:
                answer_cache.store(conn, owner_id=owner_id, document_ids=scope, question=question,
                                   embedding=embedding,
                                   answer={"answer": answer, "citations": citations, **{
                                       k: meta[k] for k in ("cited", "route", "provider", "rounds")}})

    def _finish(self, owner_id: int, chat_id: uuid.UUID, log_id: int, started: float, answer: str, status: str,
                citations: list[dict[str, Any]], meta: dict[str, Any], *, provider: str | None, cached: bool,
                emit: Emit, event: str, tokens: tuple[int, int] = (0, 0)) -> None:
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        meta = {**meta, "latency_ms": latency_ms}
        with self.db.connection() as conn, conn.transaction():
            message_id = chats.add_message(conn, owner_id=owner_id, chat_id=chat_id, role="assistant", content=answer,
                                           status=status, citations=citations, meta=meta)
            query_log.finish(conn, log_id, status=status, latency_ms=latency_ms, provider=provider, cached=cached,
                             input_tokens=tokens[0], output_tokens=tokens[1],
                             error=answer if status == "error" else None)
        payload: dict[str, Any] = {"message_id": message_id, "answer": answer, **meta}
        if event == "done":
            payload["citations"] = citations
        elif event == "blocked":
            payload["reason"] = meta.get("block_reason") or "blocked by the guardrail"
        else:
            payload["error"] = answer
        emit(event, payload)
