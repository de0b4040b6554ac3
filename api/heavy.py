"""Heavy request work kept apart from light work, and per-user caps on what a user holds open.

asyncio.to_thread runs on the event loop's default thread pool, which also verifies every
request's token and serves light reads: a handful of slow page renders there made an unrelated
`GET /api/auth/me` wait behind them. `Pool` runs such work on threads of its own, a fixed number
with a bounded wait list (full: 503 with Retry-After), at most `per_user` at once per user (more:
429), skips work whose client left before it started, and answers 503 when the work takes longer
than its deadline (the thread finishes, holding its place, so the pool never runs more than its
threads). `Slots` is the per-user cap alone, for streams a user keeps open.

Counts are per server process (`serve --workers N` has N of each).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from fastapi import HTTPException, Request

from api.limits import too_many

T = TypeVar("T")

POLL_S = 0.2  # how often a waiting request checks whether its client is still there
RETRY_AFTER_S = 5  # what a client told "busy" waits: renders take about a second


class Slots:
    """At most `per_user` of one kind of thing held open by each user; `take` answers 429 past it."""

    def __init__(self, per_user: int, what: str) -> None:
        self.per_user = per_user
        self.what = what  # e.g. "page renders", in the refusal's message
        self._held: Counter[int] = Counter()
        self._lock = threading.Lock()

    def take(self, user_id: int) -> Callable[[], None]:
        """Hold a slot; the returned function gives it back (once, however often it is called)."""
        with self._lock:
            if self._held[user_id] >= self.per_user:
                raise too_many(f"you have {self.per_user} {self.what} in progress, the most one user may "
                               f"have at once; wait for one to finish", RETRY_AFTER_S)
            self._held[user_id] += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            with self._lock:
                if given_back:
                    return
                given_back = True
                self._held[user_id] -= 1
                if self._held[user_id] <= 0:
                    del self._held[user_id]

        return give_back

    def held(self, user_id: int) -> int:
        with self._lock:
            return self._held[user_id]


class Gate:
    """At most `capacity` of one kind of thing at once in this process, all users together; `take`
    answers 503 with Retry-After past it (per user, a `Slots` answers 429 first)."""

    def __init__(self, capacity: int, what: str) -> None:
        self.capacity = capacity
        self.what = what
        self._held = 0
        self._lock = threading.Lock()

    def take(self) -> Callable[[], None]:
        with self._lock:
            if self._held >= self.capacity:
                raise HTTPException(503, f"the server is busy with other {self.what}; try again shortly",
                                    headers={"Retry-After": str(RETRY_AFTER_S)})
            self._held += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            with self._lock:
                if not given_back:
                    given_back = True
                    self._held -= 1

        return give_back


class Pool:
    """A bounded pool of threads for one kind of heavy work (see the module's docstring)."""

    def __init__(self, *, workers: int, queue: int, per_user: int, timeout_s: float, what: str) -> None:
        self.workers = workers
        self.capacity = workers + queue  # running and waiting together
        self.timeout_s = timeout_s
        self.what = what
        self.slots = Slots(per_user, what)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=what.replace(" ", "-"))
        self._admitted = 0
        self._lock = threading.Lock()

    async def run(self, request: Request, user_id: int, fn: Callable[..., T], *args: object) -> T:
        """fn(*args) on the pool, for this user's request; 429, 503 (with Retry-After) as above."""
        give_back = self.slots.take(user_id)
        with self._lock:
            full = self._admitted >= self.capacity
            if not full:
                self._admitted += 1
        if full:
            give_back()
            raise HTTPException(503, f"the server is busy with other {self.what}; try again shortly",
                                headers={"Retry-After": str(RETRY_AFTER_S)})

        def finished(_: object) -> None:  # run, failed or skipped: the place and the slot are free again
            with self._lock:
                self._admitted -= 1
            give_back()

        future = self._executor.submit(fn, *args)
        future.add_done_callback(finished)
        waiting = asyncio.wrap_future(future)
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late failure is no one's to log
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=POLL_S)
            if done:
                return waiting.result()
            if await request.is_disconnected():
                future.cancel()  # not started yet: skipped; running: it ends on its own, holding its place
                raise HTTPException(503, "the client left before the work was done")
            if loop.time() >= deadline:
                future.cancel()
                raise HTTPException(503, f"{self.what} took longer than {self.timeout_s:g} s; try again later",
                                    headers={"Retry-After": str(RETRY_AFTER_S)})

    def busy(self) -> int:
        """Work admitted and not finished (running or waiting)."""
        with self._lock:
            return self._admitted

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
