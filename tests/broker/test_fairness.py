"""Issue 26, fair ingestion on Celery: a task runs the job that is next across owners
(storage/jobs.py's order, as the in-process worker does), not the one it was published for, so
one user's long queue does not hold back another user's small file. On RabbitMQ and Redis, with a
real `thotqen worker`. Failed before the fix: the small file ran after the whole queue.

Issue 41: fair order chooses only what runs next; with every task thread on one user's long job (OCR
of a scan) another user's small file waited for it. A worker now has INGEST_FAIR_LANES beside its
task threads, as the server has (jobqueue/worker.py)."""

from __future__ import annotations

import uuid
from typing import Any

from evals.pdfs import rasterised, text_pdf
from tests.broker.test_workers import wait_for
from tests.server.conftest import signup, upload


def finished(db: Any, job_ids: list[str]) -> list[str]:
    """The jobs that ended, in the order they ended."""
    with db.connection() as conn:
        rows = conn.execute("select id from document_jobs where id = any(%s) and status in ('done', 'failed')"
                            " order by updated_at", ([uuid.UUID(j) for j in job_ids],)).fetchall()
    return [str(r[0]) for r in rows]


def test_a_small_file_does_not_wait_behind_another_users_queue(broker_api, broker_db, start_worker) -> None:
    with broker_db.connection() as conn:  # what earlier tests left queued is not this test's
        conn.execute("update document_jobs set status = 'failed', error = 'set aside by a test'"
                     " where status in ('queued', 'processing')")
    with broker_api.client() as c:
        busy, small = signup(c, "busy"), signup(c, "small")
        queue = []
        for n in range(4):  # published first, before any worker runs
            pages = [f"Busy report {n}, page {p}: revenue, costs and margins of unit {n}." for p in range(6)]
            res = upload(c, busy["headers"], f"busy-{n}.pdf", text_pdf(pages))
            assert res.status_code == 202, res.text
            queue.append(res.json()["job_id"])
        res = upload(c, small["headers"], "small.pdf", text_pdf(["A small note about Aurora Widgets."]))
        assert res.status_code == 202, res.text
        theirs = res.json()["job_id"]
    # fair order alone: no lane (below) to run the small file beside busy's first
    worker = start_worker("--concurrency", "1", INGEST_FAIR_LANES="0").wait_ready()

    def all_ended() -> list[str] | None:
        done = finished(broker_db, [*queue, theirs])
        return done if len(done) == 5 else None

    order = wait_for(all_ended, 240, "every job to end")
    assert worker.proc.poll() is None
    # busy's first job (nobody served yet), then the small file: was fifth, after busy's whole queue
    assert order == [queue[0], theirs, *queue[1:]], (order, queue, theirs)
    with broker_db.connection() as conn:
        statuses = {str(r[0]): r[1] for r in conn.execute(
            "select id, status from document_jobs where id = any(%s)",
            ([uuid.UUID(j) for j in [*queue, theirs]],)).fetchall()}
    assert set(statuses.values()) == {"done"}, statuses


def status(db: Any, job_id: str) -> str | None:
    with db.connection() as conn:
        row = conn.execute("select status from document_jobs where id = %s", (uuid.UUID(job_id),)).fetchone()
    return str(row[0]) if row else None


def test_a_small_file_never_waits_behind_another_users_long_job(broker_api, broker_db, start_worker) -> None:
    with broker_db.connection() as conn:
        conn.execute("update document_jobs set status = 'failed', error = 'set aside by a test'"
                     " where status in ('queued', 'processing')")
    tag = uuid.uuid4().hex[:6]
    scan = rasterised(text_pdf([f"Scanned page {p}: the quarterly figures of unit {p}, revenue and costs by region."
                                for p in range(12)]))  # twelve pages of OCR: the long job
    with broker_api.client() as c:
        slow, quick = signup(c, f"scan{tag}"), signup(c, f"note{tag}")
        res = upload(c, slow["headers"], "scan.pdf", scan)
        assert res.status_code == 202, res.text
        long_job = res.json()["job_id"]
        start_worker("--concurrency", "1").wait_ready()  # one task thread, and the default lane
        wait_for(lambda: status(broker_db, long_job) == "processing", 120, "the scan to start")
        res = upload(c, quick["headers"], "note.pdf", text_pdf(["A small note about Aurora Widgets."]))
        assert res.status_code == 202, res.text
        small_job = res.json()["job_id"]
    wait_for(lambda: status(broker_db, small_job) in ("done", "failed"), 240, "the small file to end")
    assert status(broker_db, small_job) == "done"
    assert status(broker_db, long_job) == "processing"  # the scan still runs: the note did not wait for it
