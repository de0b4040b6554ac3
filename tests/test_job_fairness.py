"""Issue 26: one user's long queue does not hold back another user's small file."""

from __future__ import annotations

import uuid

import psycopg


def queue(conn: psycopg.Connection, owner: int, name: str, age_s: int) -> uuid.UUID:
    doc = conn.execute(
        "insert into documents (owner_id, name, content_hash, size_bytes) values (%s, %s, %s, 1) returning id",
        (owner, name, uuid.uuid4().hex)).fetchone()[0]
    return conn.execute(
        "insert into document_jobs (document_id, owner_id, created_at, updated_at)"
        " values (%s, %s, now() - make_interval(secs => %s), now() - make_interval(secs => %s)) returning id",
        (doc, owner, age_s, age_s)).fetchone()[0]


def test_jobs_are_claimed_fairly_across_owners(db, make_user) -> None:  # noqa: ANN001
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
