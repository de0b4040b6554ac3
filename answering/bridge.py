"""The one bridge from an answer worked out in a thread to an async response (the chat route, /v1;
/rag's invoke and batch and MCP's ask await one result: `result_in_thread`).

The answer runs in its own thread (answering/chat.py is synchronous and writes the answer and its
query-log row itself): a client that goes away mid-answer sets the thread's `gone` flag, which stops
the run at its next step (a chat saves what was checked as a stopped turn). Its events reach the
response through a queue on the event loop, and always end with one final event (`done`, `blocked`
or `error`), even when the thread itself fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from answering.accounting import Ticket
from answering.chat import FINAL_EVENT, Emit
from answering.priority import lower_priority

log = logging.getLogger(__name__)

T = TypeVar("T")
Event = tuple[str, dict[str, Any]]
FINALS = frozenset(FINAL_EVENT.values())
UNSAVED = {"message_id": None, "answer": "", "error": "the answer could not be saved; please try again"}


def answer_in_thread(work: Callable[[Emit], None], *, ticket: Ticket, name: str, nice: int = 0,
                     gone: threading.Event | None = None) -> AsyncIterator[Event]:
    """Start `work(emit)` in a thread now (call it on the event loop) and return its events.
    `ticket` is the question `work` answers: if the thread cannot start, its row ends here. The
    thread runs at least `nice` (BACKGROUND_NICE, answering/priority.py): an answer's CPU work
    (retrieval, embedding the question) yields to the request loop. `gone` is set when the reader
    leaves before the final event (a closed stream, a cancelled request): `work` watches it and
    stops its run (answering/chat.py)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    ended = threading.Event()

    def put(item: Event | None) -> None:
        # the loop may be gone (server stopping): the thread's answer is saved all the same
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def emit(event: str, data: dict[str, Any]) -> None:
        if event in FINALS:
            ended.set()
        put((event, data))

    def run() -> None:
        try:
            lower_priority(nice)  # a thread of its own: nothing else runs on it afterwards
            work(emit)
        except Exception:  # the ticket recorded it; the client still gets a final event
            log.exception("%s: the answer could not be saved", name)
        finally:
            if not ended.is_set():
                emit("error", dict(UNSAVED))
            put(None)

    try:
        # in the caller's context: the request's trace (OpenTelemetry, LangSmith) goes on in the thread
        threading.Thread(target=contextvars.copy_context().run, args=(run,), name=name, daemon=True).start()
    except BaseException:
        ticket.close("the answering thread could not start")
        raise

    async def events() -> AsyncIterator[Event]:
        try:
            while (item := await queue.get()) is not None:
                yield item
        finally:
            if gone is not None and not ended.is_set():
                gone.set()  # nobody reads any more: the answer stops (issue 41: it ran on for nobody)

    return events()


async def with_keepalive(items: AsyncIterator[T], every_s: float) -> AsyncIterator[T | None]:
    """`items` as they come, and None whenever `every_s` passed without one: a stream's cue to send
    a keep-alive while the graph works (retrieval, grading) and nothing else is said. The item being
    awaited is not cancelled by the pause; it is when the reader goes away."""
    iterator = aiter(items)
    pending: asyncio.Future[T] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=every_s)
            if not done:
                yield None
                continue
            finished, pending = pending, None
            try:
                item = finished.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        if pending is not None:
            pending.cancel()


async def result_in_thread(work: Callable[[], T], *, name: str, nice: int = 0,
                           gone: threading.Event | None = None) -> T:
    """work() in a thread of its own at `nice`, as answer_in_thread's, its result (or exception)
    awaited here. An answer holds no place in asyncio's default pool, which verifies tokens and
    serves light reads: on that pool, a few long answers made every other user's request queue
    behind them. A caller that goes away still waits for the thread, so the answer keeps its place
    among the user's answers in progress (ANSWERS_PER_USER) until it has really ended; `gone`, set
    then, tells the work that nobody waits for it (a StopWatch on it ends the run soon)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)  # type: ignore[arg-type]  # work's result, None only when T allows it

    def run() -> None:
        value, error = None, None
        try:
            lower_priority(nice)  # a thread of its own: nothing else runs on it afterwards
            value = work()
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: the server is stopping
            loop.call_soon_threadsafe(settle, value, error)

    # in the caller's context: the request's trace goes on in the thread
    threading.Thread(target=contextvars.copy_context().run, args=(run,), name=name, daemon=True).start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        if gone is not None:
            gone.set()
        await asyncio.wait({done})  # until the work has ended (see above), then go on being cancelled
        if not done.cancelled():
            done.exception()  # what it raised (Stopped, when `gone` stopped it) was for the caller that left
        raise
