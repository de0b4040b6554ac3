"""Background ingestion inside the server process: threads that pick queued jobs from Postgres.

Used when no broker is configured (CELERY_BROKER_URL unset); with one, `thotqen worker` processes
run the same `run` through Celery (jobqueue/). Jobs are rows (storage/jobs.py), so a job queued by
any process is picked up, and several server processes can share the queue: each poller looks at
the oldest claimable job and `run_job` claims it with a conditional UPDATE; a poller that loses the
race (JobBusy) just looks again. A job whose worker died (lease run out) is claimable again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from answering.priority import lower_priority
from ingestion.files import LocalFiles
from ingestion.pipeline import JobOutcome, run_job
from providers import metrics, telemetry
from providers.protocols import DocumentEmbedder
from settings import Settings
from storage import jobs
from storage.db import Database
from storage.outage import DatabaseUnavailable

log = logging.getLogger(__name__)


class QueueUnavailable(Exception):
    """A queued job could not be handed to what runs jobs (a broker that is down); the upload is undone."""


class IngestWorker:
    def __init__(self, db: Database, settings: Settings, files: LocalFiles, embedder: DocumentEmbedder,
                 poll_s: float = 2.0) -> None:
        self.db = db
        self.settings = settings
        self.files = files
        self.embedder = embedder
        self.poll_s = poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._slots = 0  # the regular threads, and how many of them run a job now
        self._busy = 0
        self._lock = threading.Lock()

    def start(self, threads: int = 1, lanes: int = 0) -> None:
        """`threads` that take any job in fair order, and `lanes` (INGEST_FAIR_LANES) that take one
        only while every thread is busy, and only of an owner with no job running: a small file of
        another user never waits behind one user's long job."""
        self._slots = max(threads, 1)
        for n in range(self._slots):
            thread = threading.Thread(target=self._loop, name=f"ingest-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)
        for n in range(lanes):
            thread = threading.Thread(target=self._loop, args=(True,), name=f"ingest-lane-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def start_lanes(self, slots: int, lanes: int) -> None:
        """Only the lanes, beside `slots` workers of another kind that run jobs through `busy` (a Celery
        worker's task threads, jobqueue/app.py): the lanes take a job while all of them are busy."""
        self._slots = max(slots, 1)
        for n in range(lanes):
            thread = threading.Thread(target=self._loop, args=(True,), name=f"ingest-lane-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """One of the `slots` runs a job for the duration (what the lanes wait on)."""
        with self._lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1

    def wake(self) -> None:
        """A job was queued: look now instead of at the next poll."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)

    def _loop(self, lane: bool = False) -> None:
        # the job's CPU work (chunking, embedding: threads started from here inherit it, and so does
        # the parse sandbox's process) yields to the request loop (answering/priority.py)
        lower_priority(self.settings.background_nice)
        while not self._stop.is_set():
            if lane and self._busy < self._slots:  # a regular thread is free: it takes what comes
                self._stop.wait(self.poll_s)
                continue
            try:
                # an idle poll every poll_s is no trace (providers/telemetry.py); a job found is one
                with telemetry.untraced(), self.db.connection() as conn:
                    claimed = jobs.next_claimable(conn, idle_owner=lane)
            except DatabaseUnavailable as exc:  # logged once by storage/outage.py; try again later
                log.debug("could not read the job queue: %s", exc)
                claimed = None
            except Exception:  # the database may be restarting; try again later
                log.exception("could not read the job queue")
                claimed = None
            if claimed is None:
                self._wake.wait(self.poll_s)
                self._wake.clear()
                continue
            with telemetry.span("ingest job", **{"job.id": str(claimed.job_id), "job.format": claimed.format}):
                if lane:
                    self.run(claimed)
                    continue
                with self.busy():
                    self.run(claimed)

    def run(self, job: jobs.JobTarget) -> JobOutcome | None:
        """Run one job (fetching its file first); None when another worker holds it or it has ended."""
        job_id, owner_id, content_hash, fmt = job.job_id, job.owner_id, job.content_hash, job.format
        try:
            self.files.ensure_local(owner_id, content_hash, fmt)
        except Exception as exc:  # a storage outage fails this job with a reason
            log.warning("job %s: stored file unavailable: %s", job_id, type(exc).__name__)
        try:
            outcome = run_job(self.db, self.settings, self.embedder, job_id)
            log.info("job %s %s in %.1fs", job_id, outcome.status, outcome.seconds)
            counted(outcome)
            return outcome
        except jobs.JobBusy:
            log.info("job %s: claimed by another worker, or ended", job_id)
            return None
        except Exception:  # run_job records failures itself; this is the last guard
            log.exception("job %s crashed", job_id)
            metrics.count(metrics.INGEST_JOBS, "failed")
            with self.db.connection() as conn:
                jobs.fail_job(conn, job_id=job_id, reason="internal error while ingesting; upload the file again")
            return None
        finally:
            try:
                self.files.ingested(owner_id, content_hash, fmt)
            except Exception:
                log.warning("job %s: could not tidy the local copy", job_id)


def counted(outcome: JobOutcome) -> None:
    """The Prometheus series of a job that ran here (the server's threads or a Celery worker)."""
    status = {"ready": "done"}.get(outcome.status, outcome.status)
    metrics.count(metrics.INGEST_JOBS, status)
    if status == "done":
        metrics.count(metrics.INGESTED_PAGES, amount=outcome.pages)
