"""The graph's runs in answer processes of their own, apart from the interpreter whose event loop
authenticates every request and serves the light reads.

Under a burst of questions, answers on threads of the server process held Python's interpreter lock
for most of its samples (LangGraph, the LLM client, pydantic: evals/results/burst_profile.md), and
the event loop waited for the lock: another user's `GET /api/auth/me` took many times its idle time.
A thread cannot run below the loop's priority in a way that matters (they share one lock), a process
can: `AnswerProcesses` keeps `count` processes (each a fresh interpreter that builds its own runtime
from the server's settings, started at BACKGROUND_NICE), runs at most `per_process` answers in each
at once and lets at most `queue` more wait, the places shared fairly between owners
(answering/places.py); past that a question answers 503 with Retry-After (`AnswersBusy`). A caller
that leaves gives up its place, waiting or running (`gone`, `asubmit`, `Job.cancel`). What a run
streams (sources, tokens, the outcome) comes back over the process's socket as it happens. A run is
one of: "stream" (run_graph's events: chats, /v1), "invoke" (the final state: /rag invoke and batch,
MCP), or one of `RUNNABLE_STREAMS`, the graph's own astream / astream_log / astream_events with
LangServe's arguments (/rag's stream, stream_log and stream_events): each chunk, patch or event
comes back as LangServe would have had it in the server, and the run ends with the root run's final
state (the question's outcome).

The answering around a run stays in the server process (answering/chat.py: admission, the answer
cache, saving the turn, the query-log row), so an answer whose process dies mid-run is still saved
as an error (`AnswerLost`), and the process is started afresh for the next question. A stop (the
chat's mark in Postgres, or the caller giving up: `Job.cancel`) is checked inside the process by a
`StopWatch` on the run, as it is in a thread. A run's configuration crosses as JSON-like data: its
callbacks (a request's trace) stay behind. The Prometheus observations a run makes (LLM links, graph
nodes) come back over the same socket as (0, "metric", observation) and are recorded in the server,
whose /metrics is the one scraped (providers/metrics.py `ship_to`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, cast

from answering.places import Notify, Owner, Place, Places, PlacesBusy
from answering.priority import lower_priority
from answering.stopping import Stopped, StopWatch, chat_stop_watch
from providers import logs, metrics, telemetry

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from graph.context import GraphParts
    from graph.state import InputState

log = logging.getLogger(__name__)

RETRY_AFTER_S = 10  # what a client told "busy" waits: an answer takes seconds
ENDS = frozenset({"done", "stopped", "failed", "lost"})
METRIC_JOB = 0  # the "job" of the process's metric observations (runs are numbered from 1)
# what of a run's configuration crosses to the process (the rest, callbacks above all, does not pickle)
# (run_id: LangServe names the root run, and tells the caller the id in a stream's metadata event)
PORTABLE = ("configurable", "run_name", "metadata", "tags", "recursion_limit", "max_concurrency", "run_id")
# the graph's own async streams, run in the process as LangServe would run them in the server
RUNNABLE_STREAMS = frozenset({"astream", "astream_log", "astream_events"})


class AnswersBusy(Exception):
    """Every answer process's places and the waiting list are taken."""

    def __init__(self, retry_after_s: float = RETRY_AFTER_S) -> None:
        super().__init__("the server is busy answering other questions; try again shortly")
        self.retry_after_s = retry_after_s


class AnswerFailed(Exception):
    """The graph raised in the answer process (its message: the exception's type and text)."""


class AnswerLost(Exception):
    """The answer process ended before the run did (it crashed, or the server is stopping)."""


def owner_of(config: Any) -> Owner:  # a RunnableConfig
    """Whose run it is, for the fair share of places (run_config puts the owner in every run's config)."""
    return ((dict(config or {}).get("configurable")) or {}).get("owner_id")


def portable(config: dict[str, Any] | Any) -> dict[str, Any]:  # a RunnableConfig
    return {k: v for k, v in dict(config or {}).items() if k in PORTABLE}


# -- inside an answer process ---------------------------------------------------------------------

def serve(parts: GraphParts, conn: Connection) -> None:
    """Run what the server sends until its socket closes: ("run", id, kind, inputs, config, chat,
    trace, options) starts a run on a thread of its own (`trace`: the request's W3C trace headers
    and its id, so the run's spans and log lines are the request's) ("stream": the run's events; "invoke": its
    final state; one of RUNNABLE_STREAMS: its items as "chunk", then "done" with the final state;
    `options`: that method's keyword arguments), ("cancel", id) stops one. Every run ends with one
    of `ENDS`."""
    from graph.builder import graph
    from graph.stream import FinalState, run_context, run_graph

    sending = threading.Lock()
    cancelled: dict[int, threading.Event] = {}

    def send(message: tuple[int, str, Any]) -> None:
        with sending:
            conn.send(message)

    metrics.ship_to(lambda observation: send((METRIC_JOB, "metric", observation)))

    async def relay(job: int, items: AsyncIterator[Any]) -> None:
        async for item in items:
            send((job, "chunk", item))

    def run(job: int, kind: str, inputs: Any, portable: dict[str, Any], chat: str | None,
            trace: dict[str, str], options: dict[str, Any]) -> None:
        flag = cancelled[job]
        marked = chat_stop_watch(parts.database, uuid.UUID(chat)).requested if chat else None
        watch = StopWatch(lambda: flag.is_set() or (marked is not None and marked()))
        config = cast("RunnableConfig", {**portable, "callbacks": [watch]})
        try:
            # the run's spans stay in the request's trace, and its log lines carry the request's id
            with telemetry.continued(trace), logs.continued(trace):
                if kind == "stream":
                    for event, data in run_graph(inputs, config, parts):
                        send((job, event, data))
                elif kind in RUNNABLE_STREAMS:
                    final = FinalState()
                    config["callbacks"] = [watch, final]
                    # the async method on a loop of this run's own (astream_log and astream_events
                    # have no sync form), its sync nodes on that loop's executor, in this process
                    stream = getattr(graph, kind)(inputs, config, context=run_context(parts, config), **options)
                    asyncio.run(relay(job, stream))
                    send((job, "done", final.state))
                else:
                    send((job, "done", graph.invoke(inputs, config, context=run_context(parts, config))))
        except Stopped:
            send((job, "stopped", None))
        except Exception as exc:  # the server saves it as the answer's error
            log.exception("answer %s failed", job)
            with contextlib.suppress(Exception):
                send((job, "failed", f"{type(exc).__name__}: {exc}"))
        finally:
            cancelled.pop(job, None)

    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "cancel":
            if (flag := cancelled.get(message[1])) is not None:
                flag.set()
            continue
        _, job, kind, inputs, config, chat, trace, options = message
        cancelled[job] = threading.Event()
        threading.Thread(target=run, args=(job, kind, inputs, config, chat, trace, options), name=f"answer-{job}",
                         daemon=True).start()


def process_main(build: Callable[[Any], GraphParts]) -> None:  # the server's Settings
    """An answer process's entry: `FD NICE` on its command line, the server's settings as the first
    message; `build` makes its runtime (runtime.py, the composition root), warmed before "ready"."""
    fd, nice = int(sys.argv[1]), int(sys.argv[2])
    # a SIGTERM to the whole group (systemd, Ctrl-C in a terminal) is the server's to handle: it drains,
    # and this process ends when the server closes its socket or stops it (api/drain.py)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lower_priority(nice)  # first: every thread it starts afterwards inherits the value (Linux)
    conn = Connection(fd)
    parts = build(conn.recv())
    conn.send(("ready", os.getpid()))
    serve(parts, conn)
    # the server's socket closed (it stopped, or was killed): nothing here outlives it, whatever
    # threads the runtime started (a non-daemon one would keep the process alive)
    os._exit(0)


# -- in the server ---------------------------------------------------------------------------------

class Job:
    """One run in an answer process: its events as they come, and a way to stop it."""

    def __init__(self, process: _Process, job_id: int, release: Callable[[], None]) -> None:
        self.process, self.id = process, job_id
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.ended = False
        self._release = release
        self._wakers: list[Callable[[], None]] = []

    def put(self, kind: str, data: Any) -> None:
        if self.ended:
            return
        if kind in ENDS:
            self.ended = True
            self._release()
        self.events.put((kind, data))
        for wake in list(self._wakers):  # a reader may be removing its own
            wake()

    def cancel(self) -> None:
        if not self.ended:
            self.process.send(("cancel", self.id))

    def stream(self, gone: Callable[[], bool] | None = None, every_s: float = 0.25) -> Iterator[tuple[str, Any]]:
        """The run's events, as run_graph yields them; a stop raises Stopped, a failure AnswerFailed.
        `gone()` true (the caller left) cancels the run, which then ends as stopped."""
        told = False
        while True:
            try:
                kind, data = self.events.get(timeout=every_s if gone is not None else None)
            except queue.Empty:
                if not told and gone is not None and gone():
                    told = True
                    self.cancel()
                continue
            if kind in ENDS:
                yield kind, next(_ended(kind, data))
                return
            yield kind, data

    async def aevents(self) -> AsyncGenerator[tuple[str, Any], None]:
        """The run's events as `stream` has them, awaited without a thread; a caller that goes away
        (a cancelled task, a stream closed before its end) stops the run."""
        loop = asyncio.get_running_loop()
        arrived = asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server is stopping
                loop.call_soon_threadsafe(arrived.set)

        self._wakers.append(wake)
        try:
            while True:
                try:
                    kind, data = self.events.get_nowait()
                except queue.Empty:
                    # an event put after get_nowait wakes `arrived` after this clear (call_soon_threadsafe)
                    await arrived.wait()
                    arrived.clear()
                    continue
                if kind in ENDS:
                    yield kind, next(_ended(kind, data))
                    return
                yield kind, data
        finally:
            self._wakers.remove(wake)
            self.cancel()  # a no-op once the run ended

    async def result(self) -> Any:
        """The final event's data, awaited without a thread; a caller that goes away stops the run."""
        async with contextlib.aclosing(self.aevents()) as events:
            async for kind, data in events:
                if kind in ENDS:
                    return data
        raise AnswerLost("the run ended without a final event")  # aevents always ends with one


def _ended(kind: str, data: Any) -> Iterator[Any]:
    if kind == "stopped":
        raise Stopped
    if kind == "failed":
        raise AnswerFailed(data)
    if kind == "lost":
        raise AnswerLost(data)
    yield data


class _Process:
    """One answer process and the socket to it; a reader thread hands each message to its run."""

    def __init__(self, entry: str, settings: Any, nice: int, ready_s: float, max_mb: int = 0) -> None:
        self.max_mb = max_mb  # past it (its anonymous memory), it is started afresh once its runs have ended
        self.retiring = False  # no new run comes to it; it ends when its last run has
        self.lock = threading.Lock()  # between a run added and the process retired
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # its observations are shipped to this process, not filed
        try:
            self.process = subprocess.Popen([sys.executable, "-c", entry, str(theirs.fileno()), str(nice)], env=env,
                                            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        finally:
            theirs.close()  # the child's copy is its own: its death reads as EOF here
        self.conn = Connection(ours.detach())
        self.jobs: dict[int, Job] = {}
        self._sending = threading.Lock()
        try:
            self.conn.send(settings)
            if not self.conn.poll(ready_s):
                raise AnswerLost(f"the answer process did not start within {ready_s:g} s")
            self.conn.recv()  # ("ready", pid)
        except (EOFError, OSError, AnswerLost) as exc:
            self.kill()
            raise AnswerLost(f"the answer process failed to start ({exc or type(exc).__name__})") from None
        threading.Thread(target=self._read, name=f"answers-{self.process.pid}", daemon=True).start()

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: tuple[Any, ...]) -> None:
        with self._sending, contextlib.suppress(OSError, EOFError):
            self.conn.send(message)

    def _read(self) -> None:
        while True:
            try:
                job_id, kind, data = self.conn.recv()
            except (EOFError, OSError):
                break
            except Exception:  # a message that does not unpickle here: its run fails
                log.exception("answer process %s: a message could not be read", self.process.pid)
                continue
            if job_id == METRIC_JOB and kind == "metric":
                metrics.apply(data)
                continue
            job = self.jobs.get(job_id)
            if job is not None:
                job.put(kind, data)
                if kind in ENDS:
                    self.jobs.pop(job_id, None)
                    if self._spent():
                        break  # its runs have ended: it goes, and the next run starts a fresh one
        self.kill()
        for job in list(self.jobs.values()):
            job.put("lost", f"the answer process ended (exit code {self.process.poll()})")
        self.jobs.clear()

    def rss_mb(self) -> float | None:
        """Its resident anonymous memory (Linux's RssAnon: the heap, the models' arrays, a local
        model's cache; not the model files it maps, which the kernel may drop), None where unknown."""
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            pass
        return None

    def _spent(self) -> bool:
        """After a run ended: whether the process should go now (past its memory ceiling, measured
        here, and with no run left). It stops taking runs once past it and goes when the last ends."""
        with self.lock:
            if self.max_mb and not self.retiring and (rss := self.rss_mb()) is not None and rss > self.max_mb:
                self.retiring = True
                log.warning("answer process %s holds %.0f MB, past ANSWER_PROCESS_MAX_MB (%d): it is started "
                            "afresh once its answers have ended", self.process.pid, rss, self.max_mb)
            return self.retiring and not self.jobs

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


class AnswerProcesses:
    """`count` answer processes, `per_process` runs in each at once, shared fairly between owners
    (answering/places.py: a freed place goes to the waiting owner with the fewest runs in progress),
    `queue` more waiting (past it AnswersBusy). A process that ended is started again for the next run."""

    def __init__(self, settings: Any, *, entry: str, count: int, per_process: int, queue: int,
                 nice: int, ready_s: float = 300.0, max_mb: int = 0) -> None:
        self.settings, self.entry, self.nice, self.ready_s = settings, entry, nice, ready_s
        self.max_mb = max_mb  # ANSWER_PROCESS_MAX_MB (0: no ceiling)
        self._retired: list[_Process] = []  # replaced while they finish their runs (stopped with the rest)
        self.per_process, self.queue = per_process, queue
        self.places = Places(count * per_process, queue)
        self._starting = [threading.Lock() for _ in range(count)]
        self._processes: list[_Process | None] = [None] * count
        self._ids = itertools.count(1)
        self._closed = False

    @property
    def _running(self) -> int:
        return self.places.snapshot()[0]

    def start(self) -> None:
        """Start every process now (the server calls it before it serves: each loads the models)."""
        for i in range(len(self._processes)):
            with contextlib.suppress(AnswerLost):
                self._process(i)

    def _process(self, i: int) -> _Process:
        with self._starting[i]:
            if self._closed:
                raise AnswerLost("the server is stopping")
            found = self._processes[i]
            if found is not None and found.retiring:
                self._retired = [p for p in self._retired if p.alive()] + [found]
            if found is None or not found.alive() or found.retiring:
                found = self._processes[i] = _Process(self.entry, self.settings, self.nice, self.ready_s,
                                                      self.max_mb)
            return found

    def pids(self) -> list[int]:
        return [p.process.pid for p in self._processes if p is not None and p.alive()]

    def running(self) -> tuple[int, int]:
        """(processes alive, processes there should be): what readiness reports (api/routes/ready.py)."""
        return len(self.pids()), len(self._processes)

    def revive(self) -> None:
        """Start again any process that ended (a crash), in a thread: readiness asks, so a server whose
        process died does not wait for a question that its failing probe keeps away."""
        if not self._closed and self.running()[0] < len(self._processes):
            threading.Thread(target=self.start, name="answers-revive", daemon=True).start()

    def check(self, owner: Owner = None) -> None:
        """AnswersBusy now if a run of `owner` would be refused: a route calls it before it admits the
        question (and before its response starts), so a full server answers 503 rather than a failed
        answer. (`submit` decides again: two at once may both pass here, the second then waits or is
        refused.)"""
        try:
            self.places.check(owner)
        except PlacesBusy:
            raise AnswersBusy from None

    def _take(self, owner: Owner, notify: Notify | None) -> Place:
        try:
            return self.places.take(owner, notify)
        except PlacesBusy:
            raise AnswersBusy from None

    def submit(self, kind: str, inputs: Any, config: Any, chat: str | None = None,
               options: dict[str, Any] | None = None, *, notify: Notify | None = None,
               gone: Callable[[], bool] | None = None) -> Job:
        """Start a run ("stream", "invoke" or one of RUNNABLE_STREAMS with its keyword `options`) of
        the config's owner; waits for a place when all are taken (`notify(position)` as it moves up),
        unless the waiting list is full for this owner (AnswersBusy); a caller `gone()` meanwhile
        gives up its place (Stopped). Blocks: call it off the event loop."""
        place = self._take(owner_of(config), notify)
        if not place.wait(gone):
            raise Stopped
        return self._start(place, kind, inputs, config, chat, options)

    async def asubmit(self, kind: str, inputs: Any, config: Any,
                      options: dict[str, Any] | None = None, *, notify: Notify | None = None) -> Job:
        """`submit` awaited on the event loop: a caller that goes away while its run waits leaves
        the waiting list at once (no thread waits for the place on its behalf), and one that goes
        away while the run starts stops it."""
        place = self._take(owner_of(config), notify)
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not granted.done():
                granted.set_result(None)

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server is stopping
                loop.call_soon_threadsafe(settle)

        place.on_grant(wake)
        try:
            await granted
        except asyncio.CancelledError:
            place.abandon()
            raise
        if place.abandoned:
            raise Stopped
        starting = asyncio.ensure_future(asyncio.to_thread(self._start, place, kind, inputs, config, None, options))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                (await starting).cancel()  # started after all: stopped at once
            raise

    def _start(self, place: Place, kind: str, inputs: Any, config: Any, chat: str | None,
               options: dict[str, Any] | None) -> Job:
        try:
            # the live process with the fewest runs (one that ended is started again)
            index = min(range(len(self._processes)), key=lambda i: len(p.jobs) if (p := self._processes[i]) else 0)
            while True:
                process = self._process(index)
                with process.lock:
                    if not process.retiring:  # past its ceiling meanwhile: the next one is fresh
                        job = Job(process, next(self._ids), place.release)
                        process.jobs[job.id] = job
                        break
            process.send(("run", job.id, kind, inputs, portable(config), chat,
                          {**telemetry.carrier(), **logs.carrier()}, options or {}))
            if not process.alive():
                job.put("lost", "the answer process ended")
        except BaseException:
            place.release()
            raise
        return job

    def stream(self, inputs: InputState, config: Any, chat: uuid.UUID | None = None, *,
               notify: Notify | None = None, gone: Callable[[], bool] | None = None) -> Iterator[tuple[str, Any]]:
        """run_graph's events, the run in an answer process (`chat`: its stop mark is watched;
        `gone()`: the caller left, which stops the run, waiting or running, as a stop does)."""
        job = self.submit("stream", inputs, config, str(chat) if chat else None, notify=notify, gone=gone)
        try:
            yield from job.stream(gone)
        finally:
            job.cancel()  # the caller stopped reading: the run need not go on (no-op once ended)

    def close(self) -> None:
        self._closed = True
        for process in [*self._processes, *self._retired]:
            if process is not None:
                process.kill()
