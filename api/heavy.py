"""Heavy request work kept apart from light work, and per-user caps on what a user holds open.

asyncio.to_thread runs on the event loop's default thread pool, which also verifies every
request's token and serves light reads: a handful of slow page renders there made an unrelated
`GET /api/auth/me` wait behind them. Threads of their own were not enough either: MuPDF's drawing
and the highlight matching hold Python's GIL, so the event loop itself waited behind them
(evals/results/burst_kind_render.md). `Pool` therefore runs such work in child processes
(`Children`: a fixed number, started when first needed and reused, at a lower CPU priority), one
call at a time each, with a bounded wait list (full: 503 with Retry-After), at most `per_user` at
once per user (more: 429). Work whose client left is not waited for: skipped before it starts,
its process ended while it runs; work past its deadline answers 503 and its process is ended too,
so its place is free at once (the next call starts a fresh process). `Slots` is the per-user cap
alone, for streams a user keeps open.

Counts are per server process (`serve --workers N` has N of each).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import TypeVar

from fastapi import HTTPException, Request

from api import child
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


class WorkLost(Exception):
    """The process running the work ended before answering: ended on purpose (its client left, its
    deadline passed) or crashed (a drawing that kills MuPDF)."""


class NoWorkProcess(Exception):
    """No work process could be had: one would not start, or the server is stopping."""


class _Child:
    """One work process (api/child.py) and the socket to it."""

    def __init__(self, nice: int, preload: tuple[str, ...], ready_s: float) -> None:
        ours, theirs = socket.socketpair()
        args, env = child.command(theirs.fileno(), nice, preload)
        try:
            self.process = subprocess.Popen(args, env=env, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        finally:
            theirs.close()  # the child's copy is its own: its death reads as EOF here
        self.conn = Connection(ours.detach())
        if not self.conn.poll(ready_s):  # a process that cannot even start is not kept
            self.end()
            raise NoWorkProcess(f"the work process did not start within {ready_s:g} s")
        try:
            self.conn.recv()  # ("ready", None)
        except (EOFError, OSError):
            self.end()
            raise NoWorkProcess(f"the work process failed to start (exit code {self.process.poll()})") from None

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.process.kill()

    def call(self, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        try:
            self.conn.send((fn, args))
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            raise WorkLost(f"the work process ended (exit code {self.process.poll()})") from None
        if kind == "error":
            raise value
        result: T = value
        return result

    def end(self) -> None:
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.conn.close()


class _Job:
    """One call's claim on the child running it, so the event loop can end that child (abort)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self.aborted = False
        self._spawn_s = 0.0  # waiting for a fresh process to start (Children.call)
        self._spawn_began: float | None = None

    def spawning(self, now: bool) -> None:
        with self._lock:
            if now:
                self._spawn_began = time.monotonic()
            elif self._spawn_began is not None:
                self._spawn_s += time.monotonic() - self._spawn_began
                self._spawn_began = None

    def spawn_s(self) -> float:
        """Time spent so far waiting for a work process to start (taking an idle one costs nothing)."""
        with self._lock:
            began = self._spawn_began
            return self._spawn_s + (time.monotonic() - began if began is not None else 0.0)

    def attach(self, child: _Child | None) -> bool:
        with self._lock:
            self._child = child
            return not self.aborted

    def abort(self) -> None:
        with self._lock:
            self.aborted = True
            child = self._child
        if child is not None:
            child.kill()  # the dispatching thread reads EOF and reaps it; the next call starts another


class Children:
    """At most `size` work processes (api/child.py) for one kind of work, each started when first
    needed, with `preload` imported before it counts as ready, and reused until it is ended; `nice`
    is their CPU priority. A job's `spawn_s` is the time it spent waiting for a fresh process to
    become ready (not the work's: a deadline leaves it out)."""

    def __init__(self, size: int, *, nice: int, preload: tuple[str, ...] = (), ready_s: float = 60.0) -> None:
        self.size = size
        self.nice = nice
        self.preload = preload
        self.ready_s = ready_s
        self._idle: list[_Child] = []
        self._running: set[_Child] = set()
        self._lock = threading.Lock()
        self._closed = False

    def _take(self) -> _Child:
        with self._lock:
            if self._closed:
                raise NoWorkProcess("the server is stopping")
            while self._idle:
                one = self._idle.pop()
                if one.alive():
                    self._running.add(one)
                    return one
                one.end()
        one = _Child(self.nice, self.preload, self.ready_s)
        with self._lock:
            self._running.add(one)
        return one

    def _put_back(self, one: _Child, alive: bool) -> None:
        with self._lock:
            self._running.discard(one)
            if alive and not self._closed and one.alive():
                self._idle.append(one)
                return
        one.end()

    def call(self, job: _Job, fn: Callable[..., T], *args: object) -> T:
        """fn(*args) in a work process, from a dispatching thread (the pool's); WorkLost when the
        process ends first."""
        job.spawning(True)
        try:
            one = self._take()
        finally:
            job.spawning(False)
        if not job.attach(one):
            self._put_back(one, alive=True)
            raise WorkLost("the work was called off before it started")
        lost = False
        try:
            return one.call(fn, args)
        except WorkLost:
            lost = True
            raise
        finally:
            job.attach(None)
            self._put_back(one, alive=not lost)

    def processes(self) -> int:
        """Work processes alive now (idle and running)."""
        with self._lock:
            return sum(one.alive() for one in [*self._idle, *self._running])

    def running(self) -> int:
        """Work processes alive and taken by a call now (an idle one waits for the next call)."""
        with self._lock:
            return sum(one.alive() for one in self._running)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            everyone = [*self._idle, *self._running]
            self._idle.clear()
        for one in everyone:
            one.end()


class Pool:
    """A bounded pool of threads for one kind of heavy work (see the module's docstring)."""

    def __init__(self, *, workers: int, queue: int, per_user: int, timeout_s: float, what: str, nice: int,
                 preload: tuple[str, ...] = ()) -> None:
        self.workers = workers
        self.capacity = workers + queue  # running and waiting together
        self.timeout_s = timeout_s
        self.what = what
        self.slots = Slots(per_user, what)
        self.children = Children(workers, nice=nice, preload=preload)
        # one dispatching thread per child: it sends the call and waits on the pipe (no GIL held)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=what.replace(" ", "-"))
        self._admitted = 0
        self._lock = threading.Lock()

    async def run(self, request: Request, user_id: int, fn: Callable[..., T], *args: object) -> T:
        """fn(*args) in one of the pool's processes, for this user's request; 429, 503 (with Retry-After)
        as above. fn and its arguments must pickle (fn by reference: a module-level function, or a
        functools.partial of one); its exceptions come back as they were raised, WorkLost when its
        process ended first."""
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

        job = _Job()
        future = self._executor.submit(self.children.call, job, fn, *args)
        future.add_done_callback(finished)
        waiting = asyncio.wrap_future(future)
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late failure is no one's to log
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        try:
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=POLL_S)
                if done:
                    return waiting.result()
                if await request.is_disconnected():
                    raise HTTPException(503, "the client left before the work was done")
                if loop.time() >= deadline + job.spawn_s():  # a fresh process's start is not the work's time
                    raise HTTPException(503, f"{self.what} took longer than {self.timeout_s:g} s; try again later",
                                        headers={"Retry-After": str(RETRY_AFTER_S)})
        except BaseException:  # left, too slow, or the request's task cancelled: no one waits for it
            future.cancel()  # not started yet: skipped
            job.abort()  # running: its process is ended, and its place is free at once
            raise

    def busy(self) -> int:
        """Work admitted and not finished (running or waiting)."""
        with self._lock:
            return self._admitted

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.children.close()
