"""Celery ingestion end to end: the API queues, separate `thotqen worker` processes ingest.

Each test runs on RabbitMQ and on Redis and starts what it needs: the broker, worker subprocesses,
and the API in broker mode (tests/broker/conftest.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from evals.pdfs import AURORA_TOPICS, long_report, text_pdf
from tests.broker.conftest import ROOT
from tests.server.conftest import follow_job, signup, upload


def job_row(db: Any, job_id: str) -> dict[str, Any]:
    with db.connection() as conn:
        row = conn.execute("select status, stage, percent, attempts, worker, error, document_id from document_jobs"
                           " where id = %s", (uuid.UUID(job_id),)).fetchone()
    assert row is not None, f"job {job_id} is gone"
    return dict(zip(["status", "stage", "percent", "attempts", "worker", "error", "document_id"], row, strict=True))


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def chunk_counts(db: Any, document_id: uuid.UUID) -> tuple[int, int, int, int]:
    """(children, distinct child ords, parents, distinct parent ords) of a document: equal pairs mean
    no chunk was written twice."""
    with db.connection() as conn:
        return conn.execute(
            "select (select count(*) from child_chunks where document_id = %(d)s),"
            " (select count(distinct ord) from child_chunks where document_id = %(d)s),"
            " (select count(*) from parent_chunks where document_id = %(d)s),"
            " (select count(distinct ord) from parent_chunks where document_id = %(d)s)",
            {"d": document_id}).fetchone()


def test_an_upload_is_ingested_by_a_separate_worker(broker_api, broker_db, start_worker) -> None:
    worker = start_worker().wait_ready()
    assert broker_api.app.state.jobs.kind == "celery"
    assert not broker_api.app.state.worker._threads  # the API process runs no ingestion thread
    with broker_api.client() as c:
        user = signup(c, "celery")
        # long enough that the events are followed while the worker still embeds (RabbitMQ delivers at once)
        res = upload(c, user["headers"], "aurora.pdf", long_report(AURORA_TOPICS, pages_per_topic=8))
        assert res.status_code == 202, res.text
        events = follow_job(c, user["headers"], res.json()["job_id"])
        assert events[-1][0] == "done", events
        assert any(e == "progress" and d["stage"] == "embedding" for e, d in events)  # the worker's progress
        job = job_row(broker_db, res.json()["job_id"])
        assert job["worker"].endswith(f":{worker.pid}") and job["attempts"] == 1
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=user["headers"]).json()
        assert doc["status"] == "ready" and doc["chunks"] > 0
    # Celery logs the task's success after the task returned, so after the job row said done: a busy machine
    # lets the test read the log between the two (a race that failed at load 5-7)
    wait_for(lambda: "succeeded" in worker.text(), 60, "the worker to log the task's success")


def test_kill_9_mid_embedding_another_worker_finishes(broker_api, broker_db, start_worker) -> None:
    workers = [start_worker(), start_worker()]
    for w in workers:
        w.wait_ready()
    big = long_report([f"{t} (kill test)" for t in AURORA_TOPICS], pages_per_topic=15)  # 60 pages
    with broker_api.client() as c:
        user = signup(c, "kill")
        res = upload(c, user["headers"], "big.pdf", big)
        assert res.status_code == 202, res.text
        job_id = res.json()["job_id"]
        first = wait_for(lambda: (j := job_row(broker_db, job_id))["stage"] == "embedding" and j["percent"] > 10
                         and j, 240, "the job to be embedding")
        victim = next(w for w in workers if first["worker"].endswith(f":{w.pid}"))
        survivor = next(w for w in workers if w is not victim)
        victim.kill9()
        assert job_row(broker_db, job_id)["status"] == "processing"  # nobody finished it for the victim
        # the broker hands the unacknowledged task to the survivor (RabbitMQ when the connection drops,
        # Redis after its visibility timeout), which takes it over once the dead worker's lease ran out
        # within 90 s: Redis workers look for a dead worker's task every quarter of the visibility
        # timeout (jobqueue/app.py), not at kombu's default ~100 s cadence
        done = wait_for(lambda: (j := job_row(broker_db, job_id))["status"] in ("done", "failed") and j, 90,
                        "another worker to finish the job")
        assert done["status"] == "done", done
        assert done["worker"].endswith(f":{survivor.pid}") and done["attempts"] == 2
        children, child_ords, parents, parent_ords = chunk_counts(broker_db, done["document_id"])
        assert children == child_ords > 0 and parents == parent_ords > 0
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=user["headers"]).json()
        assert doc["status"] == "ready" and doc["chunks"] == children and doc["pages"] == 60
        with broker_db.connection() as conn:  # the sparse index's per-document statistics were not doubled
            dup = conn.execute("select count(*) from (select lexeme from term_stats where document_id = %s"
                               " group by lexeme having count(*) > 1) d", (done["document_id"],)).fetchone()[0]
            assert dup == 0


def test_sigterm_mid_embedding_lets_the_job_finish(broker_api, broker_db, start_worker) -> None:
    # what docker stop, compose and systemd send: Celery's warm shutdown finishes the running job
    # (within compose's and the unit's 120 s grace) and takes no other; the job is not run twice
    worker = start_worker().wait_ready()
    big = long_report([f"{t} (stop test)" for t in AURORA_TOPICS], pages_per_topic=8)  # 32 pages
    with broker_api.client() as c:
        user = signup(c, "warm")
        res = upload(c, user["headers"], "warm.pdf", big)
        assert res.status_code == 202, res.text
        job_id = res.json()["job_id"]
        wait_for(lambda: (j := job_row(broker_db, job_id))["stage"] == "embedding" and j["percent"] > 5,
                 240, "the job to be embedding")
        worker.proc.send_signal(signal.SIGTERM)
        assert worker.proc.wait(120) == 0, worker.text()[-3000:]
        job = job_row(broker_db, job_id)
        assert job["status"] == "done" and job["attempts"] == 1, job
        assert job["worker"].endswith(f":{worker.pid}")
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=user["headers"]).json()
        assert doc["status"] == "ready" and doc["pages"] == 32
    assert "warm shutdown" in worker.text().lower(), worker.text()[-3000:]


def test_two_workers_share_twenty_uploads_each_done_once(broker_api, broker_db, start_worker) -> None:
    # one of them also runs beat with a short upkeep interval: the retention task runs on the broker
    with broker_db.connection() as conn:
        old = conn.execute("insert into query_log (source, status, created_at) values"
                           " ('rag', 'ok', now() - interval '400 days') returning id").fetchone()[0]
    workers = [start_worker("--beat", MAINTENANCE_INTERVAL_S="2"), start_worker()]
    for w in workers:
        w.wait_ready()
    with broker_api.client() as c:
        user = signup(c, "share")
        job_ids = []
        for n in range(20):
            pdf = text_pdf([f"Shared queue document {n}: revenue was {n * 7 + 3} million dollars. " * 8])
            res = upload(c, user["headers"], f"doc-{n}.pdf", pdf)
            assert res.status_code == 202, res.text
            job_ids.append(res.json()["job_id"])

        def all_done() -> list[dict[str, Any]] | None:
            rows = [job_row(broker_db, j) for j in job_ids]
            return rows if all(r["status"] == "done" for r in rows) else None

        rows = wait_for(all_done, 300, "all 20 jobs")
    assert all(r["attempts"] == 1 for r in rows)  # each claimed exactly once
    by_worker = {w.pid: sum(r["worker"].endswith(f":{w.pid}") for r in rows) for w in workers}
    assert sum(by_worker.values()) == 20 and all(by_worker.values()), by_worker  # both took part
    for r in rows:
        children, child_ords, parents, parent_ords = chunk_counts(broker_db, r["document_id"])
        assert children == child_ords > 0 and parents == parent_ords > 0
    # each success is logged after its job row said done (the race above)
    wait_for(lambda: sum(w.text().count("succeeded") for w in workers) >= 20, 60, "20 successes in the workers' logs")
    with broker_db.connection() as conn:
        wait_for(lambda: conn.execute("select count(*) = 0 from query_log where id = %s", (old,)).fetchone()[0],
                 60, "beat's retention task to delete the old query-log row")


def test_broker_down_at_upload_is_503_and_nothing_is_kept(broker_api, broker_db, broker_settings,
                                                          broker) -> None:
    pdf = long_report(["Broker outage report: nothing of this upload may stay"], pages_per_topic=1)
    with broker_api.client() as c:
        user = signup(c, "outage")
        broker.stop()
        try:
            started = time.monotonic()
            res = upload(c, user["headers"], "outage.pdf", pdf)
            elapsed = time.monotonic() - started
        finally:
            broker.start()
        assert res.status_code == 503, res.text
        assert int(res.headers["Retry-After"]) > 0 and "broker" in res.json()["detail"]
        assert elapsed < 30
        assert c.get("/api/documents", headers=user["headers"]).json()["documents"] == []
        with broker_db.connection() as conn:
            owner = conn.execute("select id from users where username = %s", (user["username"],)).fetchone()[0]
            assert conn.execute("select count(*) from documents where owner_id = %s", (owner,)).fetchone()[0] == 0
            assert conn.execute("select count(*) from document_jobs where owner_id = %s", (owner,)).fetchone()[0] == 0
        files = Path(broker_settings.home) / "files" / str(owner)
        assert not files.exists() or not any(files.iterdir())
        # the broker is back: the same upload goes through
        res = upload(c, user["headers"], "outage.pdf", pdf)
        assert res.status_code == 202, res.text


def test_worker_without_a_broker_is_a_clear_error(worker_env) -> None:
    import subprocess
    import sys

    from tests.broker.conftest import ROOT

    env = {k: v for k, v in worker_env.items() if k != "CELERY_BROKER_URL"}
    out = subprocess.run([sys.executable, "-m", "cli", "worker"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "CELERY_BROKER_URL" in out.stderr


def test_health_still_answers(broker_api) -> None:
    assert httpx.get(f"{broker_api.url}/api/health", timeout=10).json()["status"] == "ok"


def test_doctor_checks_the_broker(worker_env, broker) -> None:
    import subprocess
    import sys

    from tests.broker.conftest import ROOT

    out = subprocess.run([sys.executable, "-m", "cli", "doctor"], cwd=ROOT, env=worker_env, capture_output=True,
                         text=True, timeout=300)
    assert "ingestion: Celery workers" in out.stdout
    scheme = broker.url.split("://")[0]  # amqp or redis
    assert f"[  ok] broker: reachable ({scheme}://" in out.stdout, out.stdout + out.stderr


def test_a_poison_job_fails_after_max_attempts_with_its_reason(broker_api, broker_db, start_worker) -> None:
    """A job whose worker dies every time (here: killed) is failed once JOB_MAX_ATTEMPTS workers died on
    it, with the stage it died in, instead of going round forever."""
    first = start_worker(JOB_MAX_ATTEMPTS="1").wait_ready()
    big = long_report([f"{t} (poison test)" for t in AURORA_TOPICS], pages_per_topic=15)
    with broker_api.client() as c:
        user = signup(c, "poison")
        res = upload(c, user["headers"], "poison.pdf", big)
        assert res.status_code == 202, res.text
        job_id = res.json()["job_id"]
        wait_for(lambda: job_row(broker_db, job_id)["stage"] == "embedding", 240, "the job to be embedding")
        first.kill9()
        start_worker(JOB_MAX_ATTEMPTS="1").wait_ready()  # the next worker gets it back and gives up on it
        events = follow_job(c, user["headers"], job_id)
        assert events[-1][0] == "failed", events
        assert events[-1][1]["error"] == "interrupted 1 times (the worker stopped during embedding); giving up"
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=user["headers"]).json()
        assert doc["status"] == "failed" and doc["error"] == events[-1][1]["error"]
        assert chunk_counts(broker_db, uuid.UUID(res.json()["document_id"]))[0] == 0


def test_a_worker_with_log_format_json_writes_json_lines_only(broker_api, start_worker) -> None:
    """LOG_FORMAT=json (providers/logs.py): Celery leaves its logging to Thotqen's configuration and prints
    no banner, so every line a worker writes, through a job, is one JSON object (Celery's own lines too)."""
    worker = start_worker(LOG_FORMAT="json", LOG_LEVEL="INFO").wait_ready()
    with broker_api.client() as c:
        user = signup(c, "jsonlog")
        res = upload(c, user["headers"], "json.pdf", text_pdf(["Aurora Widgets: the JSON log test.", "Page two."]))
        assert res.status_code == 202, res.text
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
    records = [json.loads(line) for line in worker.text().splitlines() if line.strip()]  # fails on any other line
    assert any(r["logger"] == "celery.apps.worker" and r["message"].endswith(" ready.") for r in records)
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)


def test_beat_with_log_format_json_writes_json_lines_only(broker_db, worker_env, tmp_path: Path) -> None:
    """`thotqen beat` too: no banner, Celery's scheduler lines as JSON objects (the worker's test above)."""
    log = tmp_path / "beat.log"
    env = {**worker_env, "LOG_FORMAT": "json", "LOG_LEVEL": "INFO", "MAINTENANCE_INTERVAL_S": "2",
           "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "cli", "beat"], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "Sending due task" in log.read_text() or proc.poll() is not None, 120,
                 "beat to send a task")
        time.sleep(1)  # past the publish its line announces (a SIGTERM inside it once kept beat running 30 s+)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # its threads' stacks into the log (PYTHONFAULTHANDLER)
            proc.wait(10)
    text = log.read_text()
    assert proc.returncode == 0, text[-5000:]
    records = [json.loads(line) for line in text.splitlines() if line.strip()]  # fails on any other line
    assert any(r["logger"].startswith("celery") and "Sending due task" in r["message"] for r in records), text
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
