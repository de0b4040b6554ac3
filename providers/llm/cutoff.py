"""Hard cut-offs: every provider call runs in a worker thread and is abandoned at the deadline.

SDK timeouts are not trusted (retries, slow-drip responses, DNS stalls), so the caller waits
on a future with its own deadline. An abandoned worker cannot be killed; it ends when its SDK
gives up (built with a timeout a little past the cut-off) and its result is dropped. Workers
run in a copy of the caller's context so LangChain/LangSmith tracing nests under the caller.

`watch` (the run's StopWatch, found on the call's configuration) is polled by the waiting caller
every `POLL_S`: when it raises (the person stopped, the client left) the call's sockets are shut
down (providers/llm/interrupt.py), so a call that does not stream, or a stream still reading its
prompt, stops at once instead of at its reply or its first token.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from providers.llm.errors import LinkTimeout
from providers.llm.interrupt import Scope

T = TypeVar("T")
Watch = Callable[[], None]  # raises (a BaseException) when the call should stop

POLL_S = 0.25  # how often a waiting caller asks its watch


def _waited(get: Callable[[float], T], timeout_s: float, watch: Watch | None, scope: Scope) -> T:
    """`get(seconds)` in slices of POLL_S up to `timeout_s` (its own timeout error past it), the watch
    asked between slices; a watch that raises interrupts the scope's call first."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        step = left if watch is None else min(left, POLL_S)
        try:
            return get(max(step, 0.0))
        except (FutureTimeout, queue.Empty):
            if watch is None or time.monotonic() >= deadline:
                raise
        try:
            if watch is not None:
                watch()
        except BaseException:
            scope.interrupt()
            raise


def _start(fn: Callable[[], T], name: str) -> Future[T]:
    """Run `fn` on a fresh worker thread that nobody will wait for at shutdown of the pool."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"llm-{name}")
    try:
        return executor.submit(contextvars.copy_context().run, fn)
    finally:
        executor.shutdown(wait=False)


def _scoped(fn: Callable[[], T], scope: Scope) -> Callable[[], T]:
    def run() -> T:
        with scope.active():
            return fn()

    return run


def run_with_cutoff(fn: Callable[[], T], timeout_s: float, name: str = "call", watch: Watch | None = None) -> T:
    """`fn()` or LinkTimeout after `timeout_s` seconds; exceptions from `fn` propagate, and so does
    what `watch` raises (the call interrupted)."""
    scope = Scope()
    future = _start(_scoped(fn, scope), name)
    try:
        return _waited(future.result, timeout_s, watch, scope)
    except FutureTimeout:
        future.cancel()
        scope.interrupt()  # nobody waits for its reply: the model server may stop now
        raise LinkTimeout(f"timeout: no answer within {timeout_s:g}s (executor cut-off)") from None


_END = object()


def stream_with_cutoff(make: Callable[[], Iterable[T]], timeout_s: float,
                       name: str = "stream", watch: Watch | None = None) -> Iterator[T]:
    """Items of `make()` as they come; LinkTimeout if the first item, or any gap between two
    items, takes longer than `timeout_s`. Closing this iterator before the end, or a `watch` that
    raises, shuts the stream's connection down.
    """
    items: queue.Queue[tuple[object, BaseException | None]] = queue.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for item in make():
                if stop.is_set():
                    return
                items.put((item, None))
            items.put((_END, None))
        except BaseException as exc:  # handed to the consumer thread
            items.put((_END, exc))

    scope = Scope()
    _start(_scoped(pump, scope), name)
    ended = False
    try:
        first = True
        while True:
            try:
                item, error = _waited(lambda s: items.get(timeout=s), timeout_s, watch, scope)
            except queue.Empty:
                what = "first token" if first else "next token"
                raise LinkTimeout(f"timeout: no {what} within {timeout_s:g}s (executor cut-off)") from None
            if error is not None:
                raise error
            if item is _END:
                ended = True
                return
            first = False
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        if not ended:  # left mid-way (a stop, a timeout, a failed piece): the model need not go on
            scope.interrupt()
