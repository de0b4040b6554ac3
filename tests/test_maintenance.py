"""Upkeep: retention deletes what is past its time, and the sweep re-queues and re-publishes jobs."""

from __future__ import annotations

import time
import uuid

from evals.pdfs import AURORA_TOPICS, long_report
from ingestion.pipeline import submit_pdf
from jobqueue.maintenance import MaintenanceThread, purge, sweep_jobs
from storage import jobs


def _old_and_new_rows(conn, owner: int, days: int) -> dict[str, tuple[int, int]]:
    """Insert one row past the window and one inside it in each table; {table: (old id, new id)}."""
    rows = {}
    rows["query_log"] = tuple(conn.execute(
        "insert into query_log (owner_id, source, created_at) values (%s, 'chat', now() - make_interval(days => %s))"
        " returning id", (owner, age)).fetchone()[0] for age in (days + 1, 0))
    name = f"ret-{uuid.uuid4().hex[:8]}"
    rows["login_attempts"] = tuple(conn.execute(
        "insert into login_attempts (username, ip, success, at) values (%s, '10.0.0.1', false,"
        " now() - make_interval(days => %s)) returning id", (name, age)).fetchone()[0] for age in (days + 1, 0))
    rows["refresh_tokens"] = tuple(conn.execute(
        "insert into refresh_tokens (jti, user_id, expires_at) values (%s, %s, now() + make_interval(secs => %s))"
        " returning jti", (uuid.uuid4(), owner, secs)).fetchone()[0] for secs in (-1, 3600))
    return rows


def _exists(conn, table: str, key) -> bool:
    column = "jti" if table == "refresh_tokens" else "id"
    return conn.execute(f"select count(*) from {table} where {column} = %s", (key,)).fetchone()[0] == 1


def test_retention_deletes_only_what_is_past_its_time(db, settings, make_user) -> None:
    _, owner = make_user()
    with db.connection() as conn:
        rows = _old_and_new_rows(conn, owner, settings.maintenance.retention_days)
    counts = purge(db, settings)
    with db.connection() as conn:
        for table, (old, new) in rows.items():
            assert counts[table] >= 1
            assert not _exists(conn, table, old), table
            assert _exists(conn, table, new), table


def test_the_in_process_scheduler_runs_retention(db, settings, make_user) -> None:
    _, owner = make_user()
    with db.connection() as conn:
        rows = _old_and_new_rows(conn, owner, 7)
    thread = MaintenanceThread(db, settings.model_copy(update={"retention_days": 7, "maintenance_interval_s": 0.2}))
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            with db.connection() as conn:
                if not _exists(conn, "query_log", rows["query_log"][0]):
                    break
            assert time.monotonic() < deadline, "the scheduler never ran"
            time.sleep(0.2)
    finally:
        thread.stop()
    with db.connection() as conn:
        assert _exists(conn, "query_log", rows["query_log"][1])


def test_sweep_requeues_abandoned_jobs_and_survives_a_broker_outage(db, settings, make_user) -> None:
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="sweep.pdf", data=long_report(AURORA_TOPICS[:1], 1))
    with db.connection() as conn:
        assert jobs.claim(conn, job_id=sub.job_id, lease_s=0.05, max_attempts=3)
    time.sleep(0.1)  # the worker "died": its lease ran out

    def down(job_id: uuid.UUID) -> None:
        raise ConnectionError("broker down")

    out = sweep_jobs(db, settings, publish=down)
    assert out["requeued"] >= 1 and out["unsent"] >= 1
    with db.connection() as conn:
        assert jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)["status"] == "queued"
        assert sub.job_id in jobs.unpublished(conn, older_than_s=settings.jobs.republish_s)
    sent: list[uuid.UUID] = []

    def up(job_id: uuid.UUID) -> None:
        sent.append(job_id)
        with db.connection() as conn:
            jobs.mark_published(conn, job_ids=[job_id])

    sweep_jobs(db, settings, publish=up)  # the next sweep hands it over
    assert sub.job_id in sent
    with db.connection() as conn:
        assert sub.job_id not in jobs.unpublished(conn, older_than_s=settings.jobs.republish_s)
        jobs.fail_job(conn, job_id=sub.job_id, reason="cleared by a test")
