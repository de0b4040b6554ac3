"""Issues 26 and 41: one user's long queue, or one long job, does not hold back another user's small file."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import psycopg


def queue(conn: psycopg.Connection, owner: int, name: str, age_s: int) -> uuid.UUID:
    doc = conn.execute(
        "insert into documents (owner_id, name, content_hash, size_bytes) values (%s, %s, %s, 1) returning id",
        (owner, name, uuid.uuid4().hex)).fetchone()[0]
    return conn.execute(
        "insert into document_jobs (document_id, owner_id, created_at, updated_at)"
        " values (%s, %s, now() - make_interval(secs => %s), now() - make_interval(secs => %s)) returning id",
        (doc, owner, age_s, age_s)).fetchone()[0]


def test_jobs_are_claimed_fairly_across_owners(db, make_user) -> None:
    from storage import jobs

    _, busy = make_user("busy")
    _, small = make_user("small")
    with db.connection() as conn, conn.transaction():
        # alone on the queue for this test: other tests' jobs are set aside, and everything is rolled back
        conn.execute("update document_jobs set status = 'done' where status in ('queued', 'processing')")
        long_queue = [queue(conn, busy, f"big-{n}.pdf", 600 - n) for n in range(5)]
        their = queue(conn, small, "small.pdf", 10)  # uploaded after all of busy's
        order = []
        for _ in range(6):
            nxt = jobs.next_claimable(conn)
            assert nxt is not None
            assert jobs.claim(conn, job_id=nxt.job_id, lease_s=60, max_attempts=3) is not None
            order.append(nxt.job_id)
            conn.execute("update document_jobs set status = 'done', updated_at = clock_timestamp() where id = %s",
                         (nxt.job_id,))
        # busy's oldest first (nobody served yet), then the small file: not after busy's whole queue
        assert order[:2] == [long_queue[0], their] and order[2:] == long_queue[1:]
        raise psycopg.Rollback


def _until(check: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_small_file_never_waits_behind_another_users_long_job(db, settings, make_user) -> None:
    """Issue 41: with the one ingestion thread held by a PDF's OCR, a stranger's 28-byte file waited
    226 s (fair order only chose what came next). Now a fair lane (INGEST_FAIR_LANES) takes a job
    while every thread is busy, and only of an owner with none running: the stranger's file runs at
    once, and the long job's owner's next one still waits for its turn."""
    import jobqueue.worker
    from storage import jobs

    _, busy = make_user("long")
    _, small = make_user("small")
    with db.connection() as conn:
        long_job = queue(conn, busy, "scan.pdf", 5)
    release = threading.Event()
    started: dict[uuid.UUID, float] = {}

    class Worker(jobqueue.worker.IngestWorker):
        def run(self, job: jobs.JobTarget) -> None:  # type: ignore[override]
            with self.db.connection() as conn:
                if jobs.claim(conn, job_id=job.job_id, lease_s=60, max_attempts=3) is None:
                    return
            started[job.job_id] = time.monotonic()
            if job.job_id == long_job:
                release.wait(60)  # OCR of a scan, for as long as the test holds it
            with self.db.connection() as conn:
                jobs.finish_job(conn, job_id=job.job_id)

    worker = Worker(db, settings, files=None, embedder=None, poll_s=0.05)  # type: ignore[arg-type]
    worker.start(1)
    try:
        assert _until(lambda: long_job in started, 30)
        # the lane opens once the one thread is held by the long job: started with it, the lane could see the
        # long job while the thread had found it but not yet claimed it, win the claim, and leave the thread free
        # to run the same owner's next job (seen once on a loaded machine)
        worker.start_lanes(1, 1)
        with db.connection() as conn:
            next_of_busy = queue(conn, busy, "scan-2.pdf", 0)
            theirs = queue(conn, small, "note.txt", 0)
        assert _until(lambda: theirs in started, 10), "the small file waited behind the long job"
        assert next_of_busy not in started  # one user's second job is no reason to open the lane
        release.set()
        assert _until(lambda: next_of_busy in started, 10)
    finally:
        release.set()
        worker.stop(10)
