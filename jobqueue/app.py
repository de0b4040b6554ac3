"""The Celery application: one ingestion task, and the periodic upkeep beat schedules.

Delivery is at least once, made safe:
- `acks_late`: a task's message is acknowledged when the task ends, so a worker that dies mid-job
  (kill -9, OOM) leaves it unacknowledged and the broker hands it to another worker (RabbitMQ at
  once when the connection drops; Redis after CELERY_VISIBILITY_TIMEOUT_S).
- The task is idempotent: it claims the job row before working (storage/jobs.py) and stores its
  chunks in one transaction that first checks the claim is still its own, after deleting any the
  document had; a job already done, failed or deleted is a no-op; a job a live worker holds (an
  early redelivery) is looked at again when that worker's lease would run out.
- A job whose workers keep dying (a poison file) is failed with the stage it died in once it has
  been tried JOB_MAX_ATTEMPTS times, instead of going round forever.
Tasks run in the `threads` pool: the embedding model is loaded once per process, and the
connection to the broker keeps answering heartbeats while a long job runs.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import socket
import uuid
from typing import Any, Protocol

from celery import Celery, signals

from jobqueue.depth import QueueDepth
from jobqueue.maintenance import purge, sweep_jobs
from jobqueue.worker import IngestWorker
from providers import logs, metrics, telemetry
from settings import Settings
from storage import embedding_index, jobs
from storage.db import Database, transaction_pooler

log = logging.getLogger(__name__)

INGEST = "thotqen.ingest"
SWEEP = "thotqen.sweep_jobs"
RETENTION = "thotqen.retention"
QUEUE = "thotqen"


class WorkerParts(Protocol):
    """What a worker process runs jobs with (runtime.Runtime is one): built once by its entry point."""

    @property
    def settings(self) -> Settings: ...

    @property
    def database(self) -> Database: ...

    @property
    def ingest_worker(self) -> IngestWorker: ...


def make_app(settings: Settings, parts: WorkerParts | None = None) -> Celery:
    """The Celery app for these settings. A publisher (the API, `thotqen maintenance`) needs no `parts`;
    a worker's tasks run with them."""
    if not settings.celery.broker_url:
        raise RuntimeError("CELERY_BROKER_URL is not set (amqp://... for RabbitMQ, redis://... for Redis)")
    return _build(settings, parts)


def _parts(parts: WorkerParts | None) -> WorkerParts:
    if parts is None:
        raise RuntimeError("this Celery app only publishes; `thotqen worker` runs the tasks")
    return parts


def _build(settings: Settings, parts: WorkerParts | None) -> Celery:
    app = Celery("thotqen", broker=settings.celery.broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,  # a pool child that dies puts its task back (prefork pools)
        worker_prefetch_multiplier=1,  # a worker holds one job at a time: the others stay for idle workers
        worker_cancel_long_running_tasks_on_connection_loss=False,  # the job's lease decides, not the link
        task_ignore_result=True,  # progress and outcome live in document_jobs
        task_default_queue=QUEUE,
        broker_connection_retry_on_startup=True,
        # connections an API process keeps for publishing: a burst of uploads should not queue for one
        broker_pool_limit=32,
        broker_connection_timeout=settings.celery.publish_timeout_s,
        broker_transport_options={"visibility_timeout": settings.celery.visibility_timeout_s,
                                  "socket_connect_timeout": settings.celery.publish_timeout_s,
                                  **redis_restore_options(settings.celery.visibility_timeout_s)},
        worker_hijack_root_logger=True,
        beat_schedule={
            "sweep-jobs": {"task": SWEEP, "schedule": max(settings.jobs.lease_s, 30.0)},
            "retention": {"task": RETENTION, "schedule": settings.maintenance.interval_s},
        },
    )

    # celery ships no types: its task decorator is untyped (the functions keep their annotations)
    @app.task(name=INGEST, bind=True, acks_late=True, reject_on_worker_lost=True,  # type: ignore[untyped-decorator]
              max_retries=None)
    def ingest(self: Any, job_id: str) -> str:
        return run_ingest(_parts(parts), self, uuid.UUID(job_id))

    @app.task(name=SWEEP)  # type: ignore[untyped-decorator]
    def sweep() -> dict[str, int]:
        rt = _parts(parts)
        return sweep_jobs(rt.database, rt.settings, publish=lambda job_id: publish(app, job_id, db=rt.database))

    @app.task(name=RETENTION)  # type: ignore[untyped-decorator]
    def retention() -> dict[str, int]:
        rt = _parts(parts)
        return purge(rt.database, rt.settings)

    return app


def redis_restore_options(visibility_timeout_s: float) -> dict[str, int]:
    """How often a Redis worker looks for tasks whose worker died (kombu's own default is every
    ~100 s: a 10 s sweep that scans on every 10th call), so that a task comes back about when its
    visibility timeout ends rather than up to 100 s later: one scan a sweep, a sweep every quarter
    of the timeout, at most every 10 s. RabbitMQ ignores these (it redelivers when the connection
    drops)."""
    return {"unacked_restore_throttle": 1,
            "unacked_restore_interval": int(min(10, max(1, visibility_timeout_s // 4)))}


CLAIM_TRIES = 5  # another worker may claim the job looked at first: look again, a few times


def run_ingest(rt: WorkerParts, task: Any, job_id: uuid.UUID) -> str:  # a bound Celery task
    """One delivery of a job's task. Returns what happened (for the worker's log).

    The broker hands tasks out in publish order, so one owner's long queue would hold back another's
    small file. A task is a turn to run a job, not that job: it runs the job storage/jobs.py's
    `next_claimable` says is next across owners (the in-process worker's order), which is its own
    unless another owner's is due first. There are as many tasks as jobs that need a run (one
    published per job, and one more when a job is re-queued or redelivered), and each runs at most
    one, so every job still gets its turn; a task that finds nothing to run ends (its own job was run
    by an earlier task), or looks again when a live worker's lease on its own job would run out."""
    for _ in range(CLAIM_TRIES):
        with rt.database.connection() as conn:
            target = jobs.next_claimable(conn)
        if target is None:
            break
        if target.job_id != job_id:
            log.info("job %s's turn runs job %s (fair order across owners)", job_id, target.job_id)
        with rt.ingest_worker.busy():  # the worker's fair lanes take a job while every task thread is busy
            outcome = rt.ingest_worker.run(target)
        if outcome is not None:
            return outcome.status
    with rt.database.connection() as conn:
        state = jobs.job_state(conn, job_id=job_id)
    if state is None:
        log.info("job %s: gone (its document was deleted); nothing to do", job_id)
        return "gone"
    if state.status in ("done", "failed"):
        log.info("job %s: already %s; nothing to do", job_id, state.status)
        return state.status
    lease_left_s = state.lease_left_s or 0
    if state.status == "processing" and lease_left_s > 0:
        # Redelivered while its worker is alive: look again when that worker's lease would run out.
        log.info("job %s: running elsewhere; looking again in %.0fs", job_id, lease_left_s)
        raise task.retry(countdown=lease_left_s + 1)
    return "busy"


_publishers = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="publish")


def publish(app: Celery, job_id: uuid.UUID, *, timeout_s: float | None = None, db: Any = None) -> None:
    """Send the job's task; raise when the broker did not take it.

    A broker that refuses connections fails within about `timeout_s` (the connect timeout, two quick
    retries); one that accepts but never answers is cut off after 4 x `timeout_s` (at least 30 s),
    so a slow publish under a burst of uploads is not mistaken for an outage."""

    def send() -> None:
        app.send_task(INGEST, args=[str(job_id)], queue=QUEUE, retry=True,
                      retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                                    "interval_max": 1.0})

    if timeout_s is None:
        send()
    else:
        # in the caller's context: the traced publish puts the upload's trace in the message headers
        _publishers.submit(contextvars.copy_context().run, send).result(timeout=max(30.0, 4 * timeout_s))
    if db is not None:
        with db.connection() as conn:
            jobs.mark_published(conn, job_ids=[job_id])


def own_logging(settings: Settings, loglevel: str) -> None:
    """Celery's worker and beat log in LOG_FORMAT through providers/logs.py, not in Celery's own format:
    with a receiver of `setup_logging`, Celery leaves the logging configuration to it."""

    def setup(**_: Any) -> None:  # Celery's signal arguments
        logs.configure(settings, default_level=loglevel.upper())

    signals.setup_logging.connect(setup, weak=False)


def run_worker(rt: WorkerParts, concurrency: int = 1, beat: bool = False, loglevel: str = "INFO") -> None:
    """`thotqen worker`: recover what dead workers left, then consume jobs until stopped."""
    settings = rt.settings
    own_logging(settings, loglevel)
    app = make_app(settings, rt)
    db = rt.database  # opens the database (migrating it) and loads the embedder before the first job
    embedder = rt.ingest_worker.embedder
    # As the server does: refuse to store another model's vectors, and hold the model lock so no
    # `thotqen reindex` swaps the model while this worker embeds (storage/embedding_index.py).
    with db.connection() as conn:
        embedding_index.check_model(conn, embedder.identity, embedder.dimension)
    model_lock = embedding_index.hold(db.uri, pooled=transaction_pooler(settings, db.uri))  # noqa: F841 - held for life
    swept = sweep_jobs(db, settings, publish=lambda job_id: publish(app, job_id, db=db))
    if any(swept.values()):
        log.warning("at start: %s", swept)
    argv = ["worker", "--pool", "threads", "--concurrency", str(max(concurrency, 1)), "--loglevel", loglevel,
            "--queues", QUEUE, "--hostname", f"thotqen-{uuid.uuid4().hex[:6]}@{socket.gethostname()}",
            "--without-gossip", "--without-mingle"]
    if beat:
        argv += ["--beat", "--schedule", str(settings.home / "celerybeat-schedule")]
    if settings.observability.log_format == "json":  # no banner on stdout: a JSON log holds JSON lines only
        argv = ["--quiet", *argv]
    depth = QueueDepth(db)  # read in the background, the last value kept (jobqueue/depth.py)
    scrape = metrics.serve_worker_metrics(settings, lambda: [depth])  # WORKER_METRICS_PORT
    # INGEST_FAIR_LANES beside the task threads, as in the server: the broker hands a task to a free
    # thread only, so with every thread on one user's long job another user's small file would wait
    rt.ingest_worker.start_lanes(concurrency, settings.ingestion.fair_lanes)
    try:
        app.worker_main(argv)
    finally:
        rt.ingest_worker.stop(timeout=settings.http.shutdown_grace_s)  # a lane's job finishes, as a task's does
        if scrape is not None:
            scrape.shutdown()
        telemetry.flush()  # the last tasks' spans, before the process exits


def run_beat(settings: Settings, loglevel: str = "INFO") -> None:
    """`thotqen beat`: the one scheduler of the periodic tasks (run exactly one per deployment)."""
    own_logging(settings, loglevel)
    settings.home.mkdir(parents=True, exist_ok=True)
    quiet = ["--quiet"] if settings.observability.log_format == "json" else []  # no banner among JSON lines
    make_app(settings).start([*quiet, "beat", "--schedule", str(settings.home / "celerybeat-schedule"),
                              "--loglevel", loglevel])
