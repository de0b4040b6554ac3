"""Hard cut-offs: every provider call runs in a worker thread and is abandoned at the deadline.

SDK timeouts are not trusted (retries, slow-drip responses, DNS stalls), so the caller waits
on a future with its own deadline. An abandoned worker cannot be killed; it ends when its SDK
gives up (built with a timeout a little past the cut-off) and its result is dropped. Workers
run in a copy of the caller's context so LangChain/LangSmith tracing nests under the caller.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from providers.llm.errors import LinkTimeout

T = TypeVar("T")


def _start(fn: Callable[[], T], name: str) -> Future[T]:
    """Run `fn` on a fresh worker thread that nobody will wait for at shutdown of the pool."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"llm-{name}")
    try:
        return executor.submit(contextvars.copy_context().run, fn)
    finally:
        executor.shutdown(wait=False)


def run_with_cutoff(fn: Callable[[], T], timeout_s: float, name: str = "call") -> T:
    """`fn()` or LinkTimeout after `timeout_s` seconds; exceptions from `fn` propagate."""
    future = _start(fn, name)
    try:
        return future.result(timeout=timeout_s)
    except FutureTimeout:
        future.cancel()
        raise LinkTimeout(f"timeout: no answer within {timeout_s:g}s (executor cut-off)") from None


_END = object()


def stream_with_cutoff(make: Callable[[], Iterable[T]], timeout_s: float,
                       name: str = "stream") -> Iterator[T]:
    """Items of `make()` as they come; LinkTimeout if the first item, or any gap between two
    items, takes longer than `timeout_s`. Closing this iterator stops the worker at its next item.
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
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread
            items.put((_END, exc))

    _start(pump, name)
    try:
        first = True
        while True:
            try:
                item, error = items.get(timeout=timeout_s)
            except queue.Empty:
                what = "first token" if first else "next token"
                raise LinkTimeout(f"timeout: no {what} within {timeout_s:g}s (executor cut-off)") from None
            if error is not None:
                raise error
            if item is _END:
                return
            first = False
            yield item  # type: ignore[misc]
    finally:
        stop.set()
