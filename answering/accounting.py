"""The one accounting path for questions: every way to ask (a chat, /rag invoke, batch and streams,
the OpenAI-compatible endpoint, any later one) admits its questions here and finishes them here.

`admit` checks the hourly limit and starts one query-log row per question, atomically (parallel
requests cannot all pass the check before any is counted); over the limit it raises
`QuestionLimit`, which the server answers 429 with Retry-After. Each admitted question is a
`Ticket`: the first final state written wins (ok, blocked, error, or cancelled when the caller went
away), and `Ticket.close` gives a row that never got one an error, so no row stays 'running'.
A ticket is used as a context manager around its question: by the chat service in its thread
(answering/chat.py, which writes the answer and the row in one transaction), and through
`running` around a run of the graph in async code (api/routes/rag.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import psycopg

from graph.outcome import Outcome
from providers import metrics
from settings import Settings
from storage import chats, query_log
from storage.db import Database

log = logging.getLogger(__name__)

# What a turn the server stopped in the middle of says (the web app shows it as the answer).
INTERRUPTED = "the server restarted before this answer finished: ask again"
# ... and one still running when a drain's grace ran out (api/drain.py)
STOPPED = "the server was restarting and this answer did not finish in time: ask again"

# This process's tickets not yet finished, by query-log id: what a drain ends (end_in_flight)
_open: dict[int, Ticket] = {}
_open_lock = threading.Lock()


class QuestionLimit(Exception):
    """The owner's hourly question limit (or, `per_minute`, QUESTIONS_PER_MINUTE) is reached."""

    def __init__(self, limit: int, retry_after_s: float, *, per_minute: bool = False) -> None:
        super().__init__(f"question rate limit reached ({limit} per minute)" if per_minute
                         else f"hourly question limit reached ({limit} per hour)")
        self.limit = limit
        self.retry_after_s = retry_after_s


class TokenLimit(QuestionLimit):
    """The owner's questions of the minute or hour cost more tokens than QUESTION_TOKENS_PER_MINUTE
    or _PER_HOUR allow (their question and the history the model sees: `cost`)."""

    def __init__(self, limit: int, retry_after_s: float, *, per_minute: bool, never: bool = False) -> None:
        window = "minute" if per_minute else "hour"
        Exception.__init__(self, f"this question and its history are longer than the {limit} tokens one user may "
                                 f"send per {window}; shorten them" if never
                           else f"question token limit reached ({limit} tokens of questions and history per {window})")
        self.limit = limit
        self.retry_after_s = retry_after_s


CHARS_PER_TOKEN = 4  # the usual estimate for English text: the model's own tokenizer is in its process


def cost(question: str, history: Sequence[Mapping[str, Any]] = (), turns: int | None = None) -> int:
    """What a question costs in tokens, estimated: its text and the earlier turns the model sees
    (the last `turns` user/assistant pairs: graph/nodes/common.py `history`; None: all given). A
    4,000-character question cost 7 to 18 times a short one to answer, which counting questions
    did not see."""
    seen = list(history)[-2 * turns:] if turns is not None and turns > 0 else [] if turns == 0 else list(history)
    chars = len(question) + sum(len(str(t.get("content") or "")) for t in seen)
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


class AnswersAtOnce(QuestionLimit):
    """The owner already has ANSWERS_PER_USER answers being written (in this server process)."""

    def __init__(self, limit: int) -> None:
        Exception.__init__(self, f"you have {limit} answers in progress, the most one user may have at once; "
                                 f"wait for one to finish")
        self.limit = limit
        self.retry_after_s = RETRY_AFTER_S


MINUTE, HOUR = 60.0, 3600.0  # the windows of QUESTIONS_PER_MINUTE and QUESTIONS_PER_HOUR
RETRY_AFTER_S = 5  # what a caller told "wait for one of your answers" waits: an answer takes seconds


class _Open:
    """Answers being written, per owner, in this process: the cap on open answers of every surface
    (a chat's stream, /rag's invoke, batch and streams, /v1, MCP's ask) is checked here, in `admit`."""

    def __init__(self) -> None:
        self._held: Counter[int] = Counter()
        self._lock = threading.Lock()

    def take(self, owner_id: int, count: int, limit: int) -> Callable[[], None]:
        """Hold `count` places or raise AnswersAtOnce; the returned function gives one back (each
        place once: calls past `count` do nothing)."""
        with self._lock:
            if self._held[owner_id] + count > limit:
                raise AnswersAtOnce(limit)
            self._held[owner_id] += count
        left = count

        def give_one() -> None:
            nonlocal left
            with self._lock:
                if left <= 0:
                    return
                left -= 1
                self._held[owner_id] -= 1
                if self._held[owner_id] <= 0:
                    del self._held[owner_id]

        return give_one

    def held(self, owner_id: int) -> int:
        with self._lock:
            return self._held[owner_id]


OPEN = _Open()


class _Group:
    """The places a group of tickets admitted together holds: `held` of them (a batch runs only so
    many of its inputs at once) until fewer than that are still open, then one fewer per ticket ended."""

    def __init__(self, give_one: Callable[[], None], held: int, count: int) -> None:
        self.give_one, self.held, self.open = give_one, held, count
        self._lock = threading.Lock()

    def ended(self) -> None:
        with self._lock:
            self.open -= 1
            release = self.open < self.held
            if release:
                self.held -= 1
        if release:
            self.give_one()


@dataclass
class Ticket:
    """One admitted question and its query-log row."""

    db: Database
    log_id: int
    started: float = field(default_factory=time.perf_counter)
    done: bool = False
    # an 'ok' that says the documents do not answer (nothing cited): set by whoever knows the outcome
    refused: bool = False
    group: _Group | None = None  # its place among the owner's open answers, given back when it ends

    def __post_init__(self) -> None:
        with _open_lock:
            _open[self.log_id] = self

    def _ended(self) -> None:
        with _open_lock:
            _open.pop(self.log_id, None)
        group, self.group = self.group, None
        if group is not None:
            group.ended()

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    def finish(self, *, status: str, conn: psycopg.Connection | None = None, provider: str | None = None,
               cached: bool = False, tokens: tuple[int, int] = (0, 0), error: str | None = None) -> bool:
        """Write the final state (in the caller's transaction when `conn` is given), and count it in
        the Prometheus series (providers/metrics.py): the one place a question ends. False when the
        row had ended already (a drain ended it: `end_in_flight`), so the caller saves nothing more."""
        latency_ms = self.elapsed_ms()

        def write(c: psycopg.Connection) -> bool:
            return query_log.finish(c, self.log_id, status=status, latency_ms=latency_ms, provider=provider,
                                    cached=cached, input_tokens=tokens[0], output_tokens=tokens[1], error=error)

        try:
            if conn is not None:
                wrote = write(conn)
            else:
                with self.db.connection() as own:
                    wrote = write(own)
        finally:
            self._ended()  # written or not, this answer is no longer being written
        self.done = True
        if wrote:
            outcome = metrics.question_outcome(status, refused=self.refused)
            metrics.count(metrics.QUESTIONS, outcome)
            metrics.observe(metrics.ANSWER_SECONDS, latency_ms / 1000, outcome)
        if cached and wrote:
            metrics.count(metrics.ANSWER_CACHE_HITS)
        return wrote

    def finish_outcome(self, outcome: Outcome, conn: psycopg.Connection | None = None) -> None:
        self.refused = outcome.refused
        self.finish(status=outcome.status, conn=conn, provider=outcome.provider if outcome.status == "ok" else None,
                    tokens=(outcome.input_tokens, outcome.output_tokens),
                    error=outcome.answer if outcome.status == "error" else None)

    def finish_state(self, state: object) -> None:
        """The final state from the graph's last state; anything but a state dict (the run never
        reached its end) is an error."""
        if isinstance(state, dict):
            self.finish_outcome(Outcome.from_state(state))
        else:
            self.finish(status="error", error="the graph ended without a final state")

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Around a running question: an exception ends its row as an error, the caller going away
        (a cancelled task, a closed stream) as cancelled, and a body that returned without a final
        state as an error too."""
        if kind is not None and issubclass(kind, (GeneratorExit, asyncio.CancelledError)):
            self.close("the client disconnected", status="cancelled")
        elif exc is not None:
            self.close(f"{type(exc).__name__}: {exc}")
        self.close()

    def close(self, reason: str = "the question ended without an answer", status: str = "error") -> None:
        """The last word: a row without a final state gets `status`; never raises (it runs in finally)."""
        if self.done:
            return
        try:
            self.finish(status=status, error=reason)
        except Exception:  # the database is gone; the stale sweep finishes the row at restart
            self._ended()
            log.warning("query log %s: could not record its end (%s)", self.log_id, reason)


@dataclass
class Run:
    """What the body of `running` reports: the graph's final state, once it has one."""

    state: object = None


@asynccontextmanager
async def running(ticket: Ticket) -> AsyncIterator[Run]:
    """Around one admitted run of the graph in async code (/rag's invoke, batch and streams): the
    body stores the graph's final state in `run.state`, from which the row is finished; the row
    ends as `Ticket.__exit__` says when the body raises or the caller goes away."""
    run = Run()
    with ticket:
        yield run
        await asyncio.to_thread(ticket.finish_state, run.state)


def admit(db: Database, settings: Settings, *, owner_id: int, source: str, count: int = 1,
          chat_id: uuid.UUID | None = None, at_once: int | None = None,
          tokens: list[int] | None = None, workspace_id: int | None = None) -> list[Ticket]:
    """Start `count` questions, or raise QuestionLimit when they do not all fit in the hour or the
    minute (QUESTIONS_PER_MINUTE), TokenLimit when their `tokens` (each one's `cost`; default 1
    each) do not fit in QUESTION_TOKENS_PER_MINUTE and _PER_HOUR, and AnswersAtOnce when the
    owner's answers in progress would pass ANSWERS_PER_USER. `at_once`: how many of them run at the
    same time (a batch's concurrency; default all), the places they hold. `workspace_id`: the
    workspace they are asked in, if one (recorded for its metrics)."""
    costs = tokens if tokens is not None else [1] * count
    held = min(count, at_once or count)
    give_one = OPEN.take(owner_id, held, settings.questions.answers_per_user)
    try:
        with db.connection() as conn:
            ids, wait, window, by_tokens = query_log.admit(
                conn, owner_id=owner_id, source=source, count=count, chat_id=chat_id,
                limit=settings.questions.per_hour, instance=_instance, rate=(settings.questions.per_minute, MINUTE),
                tokens=costs, token_limits=[(settings.questions.tokens_per_minute, MINUTE),
                                            (settings.questions.tokens_per_hour, HOUR)],
                workspace_id=workspace_id)
    except BaseException:
        for _ in range(held):
            give_one()
        raise
    if wait:
        for _ in range(held):
            give_one()
        if by_tokens:
            per_minute = window == MINUTE
            cap = settings.questions.tokens_per_minute if per_minute else settings.questions.tokens_per_hour
            raise TokenLimit(cap, wait, per_minute=per_minute, never=wait > window)
        raise _limit(settings, wait, window)
    group = _Group(give_one, held, count)
    return [Ticket(db, log_id, group=group) for log_id in ids]


def check(db: Database, settings: Settings, *, owner_id: int) -> None:
    """Raise QuestionLimit (or AnswersAtOnce) when the owner cannot ask now. Advisory only (an early
    429 before a response starts streaming): `admit` is what enforces both limits."""
    if OPEN.held(owner_id) >= settings.questions.answers_per_user:
        raise AnswersAtOnce(settings.questions.answers_per_user)
    q = settings.questions
    with db.connection() as conn:
        for limit, window in ((q.per_minute, MINUTE), (q.per_hour, HOUR)):
            if wait := query_log.retry_after_s(conn, owner_id=owner_id, limit=limit, window_s=window):
                raise _limit(settings, wait, window)
        for limit, window in ((q.tokens_per_minute, MINUTE), (q.tokens_per_hour, HOUR)):
            if wait := query_log.tokens_retry_after_s(conn, owner_id=owner_id, limit=limit, window_s=window,
                                                      adding=1):
                raise TokenLimit(limit, wait, per_minute=window == MINUTE)


def _limit(settings: Settings, wait: float, window: float) -> QuestionLimit:
    if window == MINUTE:
        return QuestionLimit(settings.questions.per_minute, wait, per_minute=True)
    return QuestionLimit(settings.questions.per_hour, wait)


_instance: uuid.UUID | None = None  # this process's, while it holds its lock (hold_instance)


class _Held:
    def __init__(self, conn: psycopg.Connection | None, instance: uuid.UUID | None) -> None:
        self.conn, self.instance = conn, instance

    def close(self) -> None:
        global _instance
        if _instance == self.instance:
            _instance = None
        if self.conn is not None:
            self.conn.close()


def hold_instance(db: Database, *, pooled: bool) -> _Held:
    """Mark this process's questions as its own while it lives (storage/query_log.py's lock), so
    another process's start-up sweep leaves them running. Behind a transaction pooler a session lock
    is held for no one: rows carry no instance then, and a start ends those admitted before it."""
    global _instance
    if pooled:
        return _Held(None, None)
    instance = uuid.uuid4()
    held = _Held(query_log.hold_instance(db.uri, instance), instance)
    _instance = instance
    return held


def end_in_flight(db: Database) -> int:
    """At the end of a drain: every question this process still has open ends as an error, and each
    chat turn among them is saved with STOPPED as its answer (the web app offers to ask again). The
    runs themselves may still finish later: their own final write then finds the row ended and saves
    nothing (Ticket.finish). The number ended."""
    with _open_lock:
        ids = list(_open)
    if not ids:
        return 0
    with db.connection() as conn, conn.transaction():
        count, turns = query_log.end_rows(conn, ids, error=f"interrupted: {STOPPED}")
        for owner_id, chat_id in turns:
            chats.end_unanswered(conn, owner_id=owner_id, chat_id=chat_id, content=STOPPED)
    return count


def sweep_stale(db: Database) -> int:
    """At start-up, before any question is admitted: rows a stopped process left running end as errors
    (they can no longer finish), and each chat turn among them gets its error answer saved."""
    with db.connection() as conn, conn.transaction():
        count, turns = query_log.abandon_running(conn, error=f"interrupted: {INTERRUPTED}")
        for owner_id, chat_id in turns:
            chats.end_unanswered(conn, owner_id=owner_id, chat_id=chat_id, content=INTERRUPTED)
    return count
