"""Ingestion jobs: stage and percent in `document_jobs`, so any process can report progress.

A running job holds a session-level advisory lock keyed by its id on the connection that does
the work. If that process dies, Postgres drops the lock with the connection, so the next start
can tell an interrupted job (lock free) from one that is still running elsewhere (lock held).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import parse_uuid

log = logging.getLogger(__name__)


def lock_key(job_id: uuid.UUID) -> int:
    # Advisory locks take a bigint; fold the uuid into the signed 64-bit range.
    return int.from_bytes(job_id.bytes[:8], "big", signed=True)


def create_job(conn: psycopg.Connection, *, document_id: uuid.UUID, owner_id: int) -> uuid.UUID:
    return conn.execute(
        "insert into document_jobs (document_id, owner_id) values (%s, %s) returning id",
        (document_id, owner_id),
    ).fetchone()[0]


def get_job(conn: psycopg.Connection, *, owner_id: int, job_id: uuid.UUID | str) -> dict[str, Any] | None:
    job_uuid = parse_uuid(job_id)
    if job_uuid is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select id, document_id, status, stage, percent, error, attempts, created_at, updated_at"
            " from document_jobs where owner_id = %s and id = %s",
            (owner_id, job_uuid),
        ).fetchone()


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


def claim_next(conn: psycopg.Connection) -> JobTarget | None:
    """Move the oldest queued job to 'processing' and return it; None when the queue is empty.

    `for update skip locked` lets several processes poll one queue: each job goes to exactly one.
    """
    row = conn.execute(
        "update document_jobs j set status = 'processing', stage = 'starting', updated_at = now()"
        " from documents d"
        " where j.id = (select id from document_jobs where status = 'queued' order by created_at"
        "               for update skip locked limit 1)"
        " and d.id = j.document_id"
        " returning j.id, j.document_id, j.owner_id, d.name, d.content_hash, d.format"
    ).fetchone()
    return JobTarget(*row) if row else None


def try_claim(conn: psycopg.Connection, *, job_id: uuid.UUID) -> bool:
    """Take the job's lock on this (autocommit) connection and mark it processing."""
    if not conn.execute("select pg_try_advisory_lock(%s)", (lock_key(job_id),)).fetchone()[0]:
        return False
    conn.execute(
        "update document_jobs set status = 'processing', stage = 'starting', percent = 0, error = null,"
        " attempts = attempts + 1, updated_at = now() where id = %s",
        (job_id,),
    )
    return True


def release(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    conn.execute("select pg_advisory_unlock(%s)", (lock_key(job_id),))


def set_progress(conn: psycopg.Connection, *, job_id: uuid.UUID, stage: str, percent: float) -> bool:
    """False when the job no longer exists (its document was deleted: the job should stop)."""
    return conn.execute(
        "update document_jobs set stage = %s, percent = %s, updated_at = now() where id = %s",
        (stage, round(min(max(percent, 0.0), 100.0), 1), job_id),
    ).rowcount == 1


def finish_job(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    conn.execute(
        "update document_jobs set status = 'done', stage = 'done', percent = 100, error = null,"
        " updated_at = now() where id = %s",
        (job_id,),
    )


def fail_job(conn: psycopg.Connection, *, job_id: uuid.UUID, reason: str) -> None:
    """The one way a job fails: the job and its document are marked failed with the same reason."""
    conn.execute(
        "update document_jobs set status = 'failed', stage = 'failed', error = %s, updated_at = now()"
        " where id = %s",
        (reason, job_id),
    )
    conn.execute(
        "update documents set status = 'failed', error = %s, updated_at = now()"
        " where id = (select document_id from document_jobs where id = %s)",
        (reason, job_id),
    )


def requeue_job(conn: psycopg.Connection, *, job_id: uuid.UUID) -> None:
    """Put an interrupted job (and its document) back in the queue."""
    conn.execute(
        "update document_jobs set status = 'queued', stage = 'queued', percent = 0,"
        " error = 'interrupted; re-queued', updated_at = now() where id = %s",
        (job_id,),
    )
    conn.execute(
        "update documents set status = 'queued', updated_at = now()"
        " where id = (select document_id from document_jobs where id = %s)",
        (job_id,),
    )


def recover_interrupted(conn: psycopg.Connection, *, max_attempts: int) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
    """Find jobs left 'processing' by a dead worker. Re-queue them, or fail them after max_attempts.

    Returns (requeued, failed). A job whose lock is still held belongs to a live worker and is kept.
    """
    requeued: list[uuid.UUID] = []
    failed: list[uuid.UUID] = []
    rows = conn.execute("select id, attempts from document_jobs where status = 'processing'").fetchall()
    for job_id, attempts in rows:
        key = lock_key(job_id)
        if not conn.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            continue  # a live worker holds it
        try:
            if attempts >= max_attempts:
                reason = f"interrupted {attempts} times (the worker stopped); giving up"
                fail_job(conn, job_id=job_id, reason=reason)
                failed.append(job_id)
                log.warning("job %s failed: %s", job_id, reason)
            else:
                requeue_job(conn, job_id=job_id)
                requeued.append(job_id)
                log.warning("job %s was interrupted; re-queued", job_id)
        finally:
            conn.execute("select pg_advisory_unlock(%s)", (key,))
    return requeued, failed
