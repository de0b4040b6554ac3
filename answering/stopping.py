"""Stopping an answer on the server: the person's stop request ends the model call itself.

`POST /api/chats/{id}/stop` marks the chat in Postgres (any server process may take the request);
the answering thread's `StopWatch` is a LangChain callback on the run's configuration, so every
model call of the run reports to it (each streamed token, each call's start) and it polls the mark
at most every `every_s`. On a stop it raises `Stopped` from inside the call: the streamed HTTP
response to the model server is closed there, and nothing after it (a provider fallback, the
next node) runs. A call that sends nothing back until its reply (grading) is watched by the thread
waiting for it, which shuts the call's connection down (providers/llm/interrupt.py). `Stopped` is
a BaseException on purpose: the provider chain and the graph treat an Exception as a failed
provider to fall back from, which a stop is not.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from storage import chats
from storage.db import Database


class Stopped(BaseException):  # a signal, like KeyboardInterrupt, not an error
    """The person stopped the answer."""


class StopWatch(BaseCallbackHandler):
    raise_error = True  # LangChain re-raises what a handler raises only when this is set
    stops_calls = True  # the LLM chain polls `check` while it waits for a model call (providers/llm/cutoff.py)

    def __init__(self, requested: Callable[[], bool], every_s: float = 0.25) -> None:
        self.requested = requested
        self.every_s = every_s
        self.stopped = False
        self._checked = 0.0

    def check(self) -> None:
        now = time.monotonic()
        if not self.stopped and now - self._checked >= self.every_s:
            self._checked = now
            self.stopped = self.requested()
        if self.stopped:
            raise Stopped

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.check()

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, **kwargs: Any) -> None:
        self.check()

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, **kwargs: Any) -> None:
        self.check()  # between the graph's nodes too (retrieval and grading before any token)

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.check()


def chat_stop_watch(db: Database, chat_id: uuid.UUID, every_s: float = 0.25,
                    gone: threading.Event | None = None) -> StopWatch:
    """A watch on the chat's stop mark (cleared when the turn started), and on `gone` (the client left)."""

    def requested() -> bool:
        if gone is not None and gone.is_set():
            return True
        with db.connection() as conn:
            return chats.stop_requested(conn, chat_id=chat_id)

    return StopWatch(requested, every_s)
