"""Ingestion jobs: the one state machine the in-process worker, `thotqen worker` (Celery) and the
CLI share. Stage and percent live in `document_jobs`, so any process can report progress.

queued → processing (claimed: a fresh `claim` token and a lease) → done | failed; a document
deletion removes the job (cascade), which is how a running job learns it was cancelled.

No session state: a claim is a row update and a lease a timestamp that a heartbeat pushes forward
(sql/013_job_leases.sql), so every statement works through a transaction pooler. A job left
'processing' after its lease ran out belongs to a worker that died: the next claim takes it over,
or fails it once it has been tried `max_attempts` times. Writes of a running job name its claim,
so a worker that lost its lease (or whose document was deleted) writes nothing.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import parse_uuid
from storage.rows import scalar
from storage.workspaces import Owners, owner_ids

log = logging.getLogger(__name__)

WORKER = f"{socket.gethostname()}:{os.getpid()}"


class JobBusy(RuntimeError):
    """The job cannot be claimed: another live worker holds it, or it has ended."""


class JobCancelled(Exception):
    """The job is no longer this worker's: its document was deleted, or its lease was taken over."""


def create_job(conn: psycopg.Connection, *, document_id: uuid.UUID, owner_id: int) -> uuid.UUID:
    return scalar(conn.execute(
        "insert into document_jobs (document_id, owner_id) values (%s, %s) returning id",
        (document_id, owner_id),
    ), uuid.UUID)


def delete_job(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    """Remove a job that was never handed out (its broker message could not be sent)."""
    conn.execute("delete from document_jobs where id = %s and status = 'queued'", (job_id,))


def get_job(conn: psycopg.Connection, *, owner_id: Owners, job_id: uuid.UUID | str) -> dict[str, Any] | None:
    job_uuid = parse_uuid(job_id)
    if job_uuid is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select id, document_id, status, stage, percent, error, attempts, created_at, updated_at"
            " from document_jobs where owner_id = any(%s::bigint[]) and id = %s",
            (owner_ids(owner_id), job_uuid),
        ).fetchone()


@dataclass(frozen=True)
class JobState:
    """What a worker needs to know before it runs a job it was handed."""

    status: str
    attempts: int
    lease_left_s: float | None  # seconds until a running job's lease runs out (<= 0: its worker died)


def job_state(conn: psycopg.Connection, *, job_id: uuid.UUID) -> JobState | None:
    row = conn.execute(
        "select status, attempts, extract(epoch from (lease_until - now())) from document_jobs where id = %s",
        (job_id,),
    ).fetchone()
    return JobState(row[0], row[1], float(row[2]) if row[2] is not None else None) if row else None


def active_job(conn: psycopg.Connection, *, document_id: uuid.UUID) -> uuid.UUID | None:
    """The newest queued or processing job of a document, if any."""
    row = conn.execute(
        "select id from document_jobs where document_id = %s and status in ('queued', 'processing')"
        " order by created_at desc limit 1",
        (document_id,),
    ).fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class JobTarget:
    """What a job works on: its document, that document's owner, name, stored file's hash and format."""

    job_id: uuid.UUID
    document_id: uuid.UUID
    owner_id: int
    name: str
    content_hash: str
    format: str = "pdf"


def job_target(conn: psycopg.Connection, *, job_id: uuid.UUID) -> JobTarget | None:
    row = conn.execute(
        "select j.id, j.document_id, j.owner_id, d.name, d.content_hash, d.format from document_jobs j"
        " join documents d on d.id = j.document_id where j.id = %s",
        (job_id,),
    ).fetchone()
    return JobTarget(*row) if row else None


CLAIMABLE = "(j.status = 'queued' or (j.status = 'processing' and coalesce(j.lease_until, '-infinity') < now()))"
# another job of the same owner held by a live worker
RUNNING = "r.owner_id = j.owner_id and r.status = 'processing' and r.lease_until >= now()"


def next_claimable(conn: psycopg.Connection, *, idle_owner: bool = False) -> JobTarget | None:
    """The next job a worker could claim now (queued, or abandoned by a dead worker); None when none.
    `idle_owner`: only of an owner with no job running (what a fair lane takes, jobqueue/worker.py).

    Fair across owners, so one user's long queue never holds back another's small file: the owner
    with the fewest jobs running goes first, then the one served longest ago (its last job started or
    ended earliest; never served: first), and within an owner the oldest job. Only a look: `claim`
    decides, so two pollers that see the same job run it once."""
    row = conn.execute(
        "select j.id, j.document_id, j.owner_id, d.name, d.content_hash, d.format from document_jobs j"
        f" join documents d on d.id = j.document_id where {CLAIMABLE}"
        + (f" and not exists (select 1 from document_jobs r where {RUNNING})" if idle_owner else "")
        + " order by (select count(*) from document_jobs r where r.owner_id = j.owner_id and r.status = 'processing'"
        "           and r.lease_until >= now()),"
        "          (select max(r.updated_at) from document_jobs r where r.owner_id = j.owner_id"
        "           and r.status <> 'queued') asc nulls first,"
        "          j.created_at limit 1"
    ).fetchone()
    return JobTarget(*row) if row else None


def claim(conn: psycopg.Connection, *, job_id: uuid.UUID, lease_s: float, max_attempts: int) -> uuid.UUID | None:
    """Claim a queued or abandoned job for this worker; its claim token, or None when it is not claimable.

    An abandoned job (its worker's lease ran out) that was already tried `max_attempts` times is
    failed here with the stage its last worker died in: a poison job stops instead of looping.
    """
    with conn.transaction():
        row = conn.execute(
            f"select j.status, j.attempts, j.stage from document_jobs j where j.id = %s and {CLAIMABLE}"
            " for update",
            (job_id,),
        ).fetchone()
        if row is None:
            return None
        status, attempts, stage = row
        if status == "processing" and attempts >= max_attempts:
            fail_job(conn, job_id=job_id, reason=abandoned_reason(attempts, stage))
            log.warning("job %s failed: %s", job_id, abandoned_reason(attempts, stage))
            return None
        return scalar(conn.execute(
            "update document_jobs set status = 'processing', stage = 'starting', percent = 0, error = null,"
            " attempts = attempts + 1, claim = gen_random_uuid(), lease_until = now() + make_interval(secs => %s),"
            " worker = %s, updated_at = now() where id = %s returning claim",
            (lease_s, WORKER, job_id),
        ), uuid.UUID)


def abandoned_reason(attempts: int, stage: str) -> str:
    return f"interrupted {attempts} times (the worker stopped during {stage}); giving up"


def renew(conn: psycopg.Connection, *, job_id: uuid.UUID, claim: uuid.UUID, lease_s: float) -> bool:
    """Push the lease forward; False when the job is gone (document deleted) or no longer ours."""
    cur = conn.execute(
        "update document_jobs set lease_until = now() + make_interval(secs => %s)"
        " where id = %s and claim = %s and status = 'processing'",
        (lease_s, job_id, claim),
    )
    return cur.rowcount == 1


def hold(conn: psycopg.Connection, *, job_id: uuid.UUID, claim: uuid.UUID) -> None:
    """Inside the transaction that stores a job's results: lock the job row and check it is still ours.

    Two workers storing the same document queue on this lock, and the one that lost the claim
    stops here, so a redelivered job never writes its chunks twice. A deleted document's job is gone:
    JobCancelled, instead of a foreign-key error halfway through the writes."""
    row = conn.execute(
        "select 1 from document_jobs where id = %s and claim = %s and status = 'processing' for update",
        (job_id, claim),
    ).fetchone()
    if row is None:
        raise JobCancelled("the job was cancelled (its document was deleted) or taken over by another worker")


class Lease:
    """Keeps a claimed job's lease alive from a thread with its own pooled connection.

    `check()` raises JobCancelled once a heartbeat found the job gone or taken over; the pipeline
    calls it at every progress report, so a deleted document stops its job within a heartbeat."""

    def __init__(self, db: Any, job_id: uuid.UUID, claim: uuid.UUID, lease_s: float) -> None:
        self.db, self.job_id, self.claim, self.lease_s = db, job_id, claim, lease_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        # in the job's context: its heartbeats are spans of the job's trace (were tracing on), not a
        # trace each
        self._thread = threading.Thread(target=contextvars.copy_context().run, args=(self._beat,),
                                        name=f"lease-{job_id}", daemon=True)

    def _beat(self) -> None:
        every = max(self.lease_s / 4, 0.2)
        while not self._stop.wait(every):
            try:
                with self.db.connection() as conn:
                    if not renew(conn, job_id=self.job_id, claim=self.claim, lease_s=self.lease_s):
                        self.lost.set()
                        return
            except Exception:  # a database hiccup: try again at the next beat
                log.warning("job %s: could not renew its lease", self.job_id)

    def check(self) -> None:
        if self.lost.is_set():
            raise JobCancelled("the job was cancelled (its document was deleted) or taken over by another worker")

    def start(self) -> Lease:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def __enter__(self) -> Lease:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def set_progress(conn: psycopg.Connection, *, job_id: uuid.UUID, stage: str, percent: float,
                 claim: uuid.UUID | None = None) -> bool:
    """Record stage and percent; with `claim`, only while the job is still ours (False otherwise)."""
    cur = conn.execute(
        "update document_jobs set stage = %s, percent = %s, updated_at = now()"
        " where id = %s and (%s::uuid is null or (claim = %s and status = 'processing'))",
        (stage, round(min(max(percent, 0.0), 100.0), 1), job_id, claim, claim),
    )
    return cur.rowcount == 1


def finish_job(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    conn.execute(
        "update document_jobs set status = 'done', stage = 'done', percent = 100, error = null,"
        " lease_until = null, updated_at = now() where id = %s",
        (job_id,),
    )


def fail_job(conn: psycopg.Connection, *, job_id: uuid.UUID, reason: str, claim: uuid.UUID | None = None) -> bool:
    """The one way a job fails: the job and its document are marked failed with the same reason.

    With `claim`, only while the job is still that claim's (a worker that lost its job fails nothing)."""
    cur = conn.execute(
        "update document_jobs set status = 'failed', stage = 'failed', error = %s, lease_until = null,"
        " updated_at = now() where id = %s and (%s::uuid is null or claim = %s) returning document_id",
        (reason, job_id, claim, claim),
    )
    row = cur.fetchone()
    if row is None:
        return False
    conn.execute("update documents set status = 'failed', error = %s, updated_at = now() where id = %s",
                 (reason, row[0]))
    return True


def release(conn: psycopg.Connection, *, job_id: uuid.UUID, claim: uuid.UUID | None = None) -> None:
    """A worker is done with a job: drop the lease of one it left running (an unexpected exit path)."""
    conn.execute(
        "update document_jobs set lease_until = now() where id = %s and status = 'processing'"
        " and (%s::uuid is null or claim = %s)",
        (job_id, claim, claim),
    )


def requeue_job(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    """Put an interrupted job (and its document) back in the queue."""
    conn.execute(
        "update document_jobs set status = 'queued', stage = 'queued', percent = 0, claim = null,"
        " lease_until = null, published_at = null, error = 'interrupted; re-queued', updated_at = now()"
        " where id = %s",
        (job_id,),
    )
    conn.execute(
        "update documents set status = 'queued', updated_at = now()"
        " where id = (select document_id from document_jobs where id = %s)",
        (job_id,),
    )


def recover_interrupted(conn: psycopg.Connection, *, max_attempts: int) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
    """Find jobs left 'processing' by a dead worker (lease run out). Re-queue them, or fail them after
    max_attempts. Returns (requeued, failed). A job whose lease is alive belongs to a live worker."""
    requeued: list[uuid.UUID] = []
    failed: list[uuid.UUID] = []
    with conn.transaction():
        rows = conn.execute(
            "select id, attempts, stage from document_jobs j where j.status = 'processing'"
            " and coalesce(j.lease_until, '-infinity') < now() for update skip locked"
        ).fetchall()
        for job_id, attempts, stage in rows:
            if attempts >= max_attempts:
                fail_job(conn, job_id=job_id, reason=abandoned_reason(attempts, stage))
                failed.append(job_id)
                log.warning("job %s failed: %s", job_id, abandoned_reason(attempts, stage))
            else:
                requeue_job(conn, job_id=job_id)
                requeued.append(job_id)
                log.warning("job %s was interrupted; re-queued", job_id)
    return requeued, failed


def unpublished(conn: psycopg.Connection, *, older_than_s: float) -> list[uuid.UUID]:
    """Queued jobs never handed to the broker, or last handed over more than `older_than_s` ago (a lost
    message, or a job queued while Thotqen ran without a broker)."""
    return [row[0] for row in conn.execute(
        "select id from document_jobs where status = 'queued'"
        " and coalesce(published_at, '-infinity') < now() - make_interval(secs => %s) order by created_at",
        (older_than_s,),
    ).fetchall()]


def mark_published(conn: psycopg.Connection, *, job_ids: list[uuid.UUID]) -> None:
    conn.execute("update document_jobs set published_at = now() where id = any(%s)", (job_ids,))


def queue_depth(conn: psycopg.Connection) -> dict[str, int]:
    """Jobs waiting and running now ({"queued": n, "processing": m}), for the metrics' queue depth."""
    counts = {"queued": 0, "processing": 0}
    for status, n in conn.execute("select status, count(*) from document_jobs"
                                  " where status in ('queued', 'processing') group by status").fetchall():
        counts[status] = int(n)
    return counts
