"""Against the real embedded Postgres: ingestion rows, dedupe, isolation, HNSW, bad files, recovery."""

from __future__ import annotations

import time
import uuid

import numpy as np
import psycopg
import pytest

from evals import pdfs
from ingestion.errors import IngestError
from ingestion.pipeline import run_job, submit_pdf
from storage import documents, jobs
from storage.db import migrate, pending_migrations
from storage.search import SearchParams, search

TOPICS = ["Lithium battery recycling plant", "Quarterly dividend policy", "Hurricane damage to warehouses",
          "Patent litigation with a competitor"]


@pytest.fixture(scope="module")
def report() -> bytes:
    return pdfs.long_report(TOPICS)


def chunk_rows(db, document_id):
    with db.connection() as conn:
        return conn.execute(
            "select c.page, p.page_start, p.page_end from child_chunks c join parent_chunks p on p.id = c.parent_id"
            " where c.document_id = %s",
            (document_id,),
        ).fetchall()


def run_search(db, embedder, owner_id, query, mode="hybrid", docs=None, k=5, **params):
    vec = embedder.embed_query(query) if mode != "sparse" else None
    with db.connection() as conn:
        return search(conn, owner_id=owner_id, query_text=query, query_embedding=vec,
                      params=SearchParams(k=k, mode=mode, **params), document_ids=docs)


def test_migrations_are_idempotent(db) -> None:
    with psycopg.connect(db.uri) as conn:
        assert migrate(conn) == []
        assert pending_migrations(conn) == []


def test_every_chunk_knows_its_page(db, make_user, ingest, report) -> None:
    _, owner = make_user()
    sub, outcome = ingest(owner, "report.pdf", report)
    assert outcome.status == "ready" and outcome.pages == 8
    rows = chunk_rows(db, sub.document_id)
    assert len(rows) == outcome.children > 0
    for page, start, end in rows:
        assert 1 <= start <= page <= end <= 8
    assert {page for page, _, _ in rows} == set(range(1, 9))


def test_search_finds_the_right_page_in_every_mode(db, embedder, make_user, ingest, report) -> None:
    _, owner = make_user()
    ingest(owner, "report.pdf", report)
    for mode in ("hybrid", "dense", "sparse"):
        hits = run_search(db, embedder, owner, "hurricane damage warehouses", mode=mode)
        assert hits, mode
        assert hits[0].page in (5, 6), (mode, [h.page for h in hits])
        assert "Hurricane damage" in hits[0].parent_text
    hit = run_search(db, embedder, owner, "hurricane damage warehouses")[0]
    assert hit.dense_rank is not None and hit.sparse_rank is not None


def test_sparse_postings_hold_every_chunk_of_each_term(db, make_user, ingest, report) -> None:
    """term_stats carries each filing's postings (sql/011_term_postings.sql): for every lexeme, the
    ids of exactly the chunks whose tsvector holds it, with heading words weighted double."""
    _, owner = make_user()
    sub, _ = ingest(owner, "report.pdf", report)
    with db.connection() as conn:
        assert conn.execute("select to_regclass('child_terms')").fetchone()[0] is None
        expected = dict(conn.execute(
            "select t.lexeme, array_agg(c.id order by c.id) from child_chunks c, unnest(c.tsv) t"
            " where c.document_id = %s group by t.lexeme", (sub.document_id,)).fetchall())
        rows = conn.execute("select lexeme, ndoc, child_ids, weights from term_stats where document_id = %s",
                            (sub.document_id,)).fetchall()
        assert {lexeme: ids for lexeme, _, ids, _ in rows} == expected
        assert all(ndoc == len(ids) == len(weights) for _, ndoc, ids, weights in rows)
        heading_word = conn.execute(
            "select t.lexeme from child_chunks c, unnest(c.tsv) t where c.document_id = %s"
            " and 'A' = any (t.weights) and array_length(t.positions, 1) = 1 limit 1", (sub.document_id,)).fetchone()
        assert heading_word is not None
        weights = conn.execute("select weights from term_stats where document_id = %s and lexeme = %s",
                               (sub.document_id, heading_word[0])).fetchone()[0]
        assert max(weights) >= 2.0  # 2 x (1 x 2.2 / 2.2)
        assert documents.delete_document(conn, owner_id=owner, document_id=sub.document_id)
        assert conn.execute("select count(*) from term_stats where document_id = %s",
                            (sub.document_id,)).fetchone()[0] == 0


def test_score_fusion_is_an_alpha_blend_of_normalised_scores(db, embedder, make_user, ingest, report) -> None:
    _, owner = make_user()
    ingest(owner, "report.pdf", report)
    query = "hurricane damage warehouses"
    hits = run_search(db, embedder, owner, query, fusion="score", k=10)
    assert hits[0].page in (5, 6) and all(0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # alpha = 1 keeps the dense order, alpha = 0 the sparse order
    dense_only = run_search(db, embedder, owner, query, fusion="score", sparse_weight=0.0, k=10)
    assert [h.child_id for h in dense_only if h.dense_rank] == \
        [h.child_id for h in sorted((h for h in dense_only if h.dense_rank), key=lambda h: h.dense_rank)]
    with pytest.raises(ValueError):
        run_search(db, embedder, owner, query, fusion="max")


def test_the_dense_leg_has_its_own_rrf_constant(db, embedder, make_user, ingest, report) -> None:
    """RRF adds dense_weight / (dense_rrf_k + dense rank) and sparse_weight / (rrf_k + sparse rank):
    each constant moves its own leg's share only (evals/results/fusion_cv.md chose them)."""
    _, owner = make_user()
    ingest(owner, "report.pdf", report)
    query = "hurricane damage warehouses"
    for rrf_k, dense_rrf_k in ((60, 60), (5, 100), (60, 1)):
        hits = run_search(db, embedder, owner, query, k=10, heading_weight=0.0, rrf_k=rrf_k, dense_rrf_k=dense_rrf_k,
                          dense_weight=0.5)
        assert hits
        for h in hits:
            expected = (0.5 / (dense_rrf_k + h.dense_rank) if h.dense_rank else 0.0) \
                + (1 / (rrf_k + h.sparse_rank) if h.sparse_rank else 0.0)
            assert h.score == pytest.approx(expected), (rrf_k, dense_rrf_k)


def test_heading_leg_brings_the_named_statement_forward(db, embedder, make_user, ingest) -> None:
    """A question naming the cash flow statement: chunks under that page heading form the third leg."""
    _, owner = make_user()
    prose = ("Capital Spending. Investments in property, plant and equipment enable growth in many markets. "
             "Capital expenditures are expected to rise next year as the company invests in new plants. ") * 6
    statement = ("Consolidated Statements of Cash Flows\n(Dollars in millions)\n"
                 + "Purchases of property, plant and equipment (1,577) (1,373)\n"
                 + "Net cash used in investing activities (222) (3,086)\n" * 4)
    other = "Hurricane damage to warehouses was repaired during the year. " * 12
    sub, _ = ingest(owner, "capex.pdf", pdfs.text_pdf([prose, statement, other]))
    query = "What is the FY2018 capital expenditure? Answer from the cash flow statement."
    with_leg = run_search(db, embedder, owner, query, docs=[sub.document_id], k=10)
    without = run_search(db, embedder, owner, query, docs=[sub.document_id], k=10, heading_weight=0.0)
    on_leg = [h for h in with_leg if h.heading_rank is not None]
    assert on_leg and all(h.page == 2 for h in on_leg)
    assert with_leg[0].page == 2 and with_leg[0].heading_rank == 1
    assert all(h.heading_rank is None for h in without)
    # RRF: the leg adds weight / (rrf_k + rank) to the chunk's fused score, nothing else changes
    before = next(h.score for h in without if h.child_id == with_leg[0].child_id)
    assert with_leg[0].score == pytest.approx(before + 1 / 61)
    # a question naming no statement is untouched by the leg
    plain = run_search(db, embedder, owner, "hurricane damage warehouses", docs=[sub.document_id])
    assert plain[0].page == 3 and all(h.heading_rank is None for h in plain)


def test_reupload_reuses_the_index(db, make_user, ingest, report) -> None:
    _, owner = make_user()
    first, _ = ingest(owner, "report.pdf", report)
    again, outcome = ingest(owner, "renamed.pdf", report)
    assert again.reused and again.document_id == first.document_id and outcome is None
    assert first.created and not again.created and again.content_hash == first.content_hash
    with db.connection() as conn:
        count = conn.execute("select count(*) from documents where owner_id = %s", (owner,)).fetchone()[0]
    assert count == 1


def test_a_failed_document_is_redone_on_reupload(db, settings, make_user, ingest, report) -> None:
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    in_progress = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    assert sub.created and not in_progress.created and in_progress.job_id == sub.job_id
    with db.connection() as conn:
        conn.execute("update documents set status = 'failed', error = 'boom' where id = %s", (sub.document_id,))
        conn.execute("update document_jobs set status = 'failed' where id = %s", (sub.job_id,))
    again, outcome = ingest(owner, "report.pdf", report)
    assert not again.reused and not again.created and again.document_id == sub.document_id
    assert outcome.status == "ready"


def test_same_file_for_two_users_is_two_documents(db, make_user, ingest, report) -> None:
    _, a = make_user()
    _, b = make_user()
    sa, _ = ingest(a, "report.pdf", report)
    sb, outcome = ingest(b, "report.pdf", report)
    assert sa.document_id != sb.document_id and outcome.status == "ready"


def test_user_b_never_sees_user_a_chunks(db, embedder, make_user, ingest, report) -> None:
    _, a = make_user()
    _, b = make_user()
    sub, _ = ingest(a, "secret.pdf", report)
    for mode in ("hybrid", "dense", "sparse"):
        assert run_search(db, embedder, a, "dividend policy", mode=mode)
        assert run_search(db, embedder, b, "dividend policy", mode=mode) == []
        # naming A's document explicitly changes nothing
        assert run_search(db, embedder, b, "dividend policy", mode=mode, docs=[sub.document_id], k=50) == []
    from storage.documents import delete_document, get_document

    with db.connection() as conn:
        assert get_document(conn, owner_id=b, document_id=sub.document_id) is None
        assert not delete_document(conn, owner_id=b, document_id=sub.document_id)
        assert get_document(conn, owner_id=a, document_id=sub.document_id) is not None


def test_document_filter_limits_the_search(db, embedder, make_user, ingest) -> None:
    _, owner = make_user()
    one, _ = ingest(owner, "one.pdf", pdfs.long_report(["Quarterly dividend policy"]))
    two, _ = ingest(owner, "two.pdf", pdfs.long_report(["Patent litigation with a competitor"]))
    hits = run_search(db, embedder, owner, "dividend policy", docs=[two.document_id], k=20)
    assert hits and {h.document_id for h in hits} == {two.document_id}


@pytest.mark.parametrize(
    ("data", "reason"),
    [(pdfs.encrypted_pdf(), "encrypted"), (pdfs.image_only_pdf(), "no text found")],
    ids=["encrypted", "nothing-to-read"],
)
def test_bad_pdf_fails_clearly_and_leaves_no_chunks(db, make_user, ingest, data, reason) -> None:
    _, owner = make_user()
    sub, outcome = ingest(owner, "bad.pdf", data)
    assert outcome.status == "failed" and reason in outcome.error
    assert chunk_rows(db, sub.document_id) == []
    with db.connection() as conn:
        status, error = conn.execute("select status, error from documents where id = %s",
                                     (sub.document_id,)).fetchone()
        job = conn.execute("select status, error from document_jobs where id = %s", (sub.job_id,)).fetchone()
    assert status == "failed" and reason in error
    assert job[0] == "failed" and reason in job[1]


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64), b"",
                                  pdfs.text_pdf(["cut short"] * 4)[:300]],
                         ids=["image", "empty", "truncated"])
def test_unaccepted_or_broken_file_is_refused_before_any_row(db, settings, make_user, data) -> None:
    _, owner = make_user()
    with pytest.raises(IngestError):
        submit_pdf(db, settings, owner_id=owner, name="x.pdf", data=data)
    with db.connection() as conn:
        assert conn.execute("select count(*) from documents where owner_id = %s", (owner,)).fetchone()[0] == 0


def test_a_failure_while_storing_leaves_no_partial_rows(db, settings, embedder, make_user, report,
                                                       monkeypatch) -> None:
    from storage import documents

    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    real = documents.set_document_status

    def explode(conn, **kwargs):
        if kwargs.get("status") == "ready":  # inside the chunk transaction, after the rows were written
            raise RuntimeError("disk full")
        return real(conn, **kwargs)

    monkeypatch.setattr(documents, "set_document_status", explode)
    outcome = run_job(db, settings, embedder, sub.job_id)
    assert outcome.status == "failed" and "disk full" in outcome.error
    assert chunk_rows(db, sub.document_id) == []
    with db.connection() as conn:
        assert conn.execute("select count(*) from parent_chunks where document_id = %s",
                            (sub.document_id,)).fetchone()[0] == 0


def test_dense_search_uses_the_hnsw_index(db, make_user) -> None:
    """Fill one owner with 12,000 vectors, then read the plan of a real hybrid_search() call."""
    _, owner = make_user()
    rng = np.random.default_rng(0)
    with db.connection() as conn, conn.transaction():
        doc = conn.execute(
            "insert into documents (owner_id, name, content_hash, size_bytes, status) values (%s, 'bulk', %s, 1,"
            " 'ready') returning id", (owner, uuid.uuid4().hex)).fetchone()[0]
        parent = conn.execute(
            "insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)"
            " values (%s, %s, 0, 1, 1, 'p') returning id", (doc, owner)).fetchone()[0]
        with conn.cursor() as cur, cur.copy(
            "copy child_chunks (parent_id, document_id, owner_id, ord, page, text, embedding) from stdin"
            " with (format binary)") as copy:
            copy.set_types(["int8", "uuid", "int8", "int4", "int4", "text", "vector"])
            for i in range(12_000):
                vec = rng.normal(size=384).astype(np.float32)
                copy.write_row((parent, doc, owner, i, 1, f"row {i}", vec / np.linalg.norm(vec)))
        conn.execute("analyze child_chunks")
    query = rng.normal(size=384).astype(np.float32)
    with db.connection() as conn:
        plan = "\n".join(r[0] for r in conn.execute(
            "explain select * from hybrid_search(array[%s]::bigint[], %s, 'row', 5, null, 'hybrid')",
            (owner, query)).fetchall())
        print(plan)
        assert "child_chunks_embedding_idx" in plan
        # filtered by documents and still k rows back (iterative index scan; one filing alone, or a
        # scope of few chunks, is an exact scan instead)
        conn.execute("update documents set children = 12000 where id = %s", (doc,))
        other = conn.execute(
            "insert into documents (owner_id, name, content_hash, size_bytes, status) values (%s, 'empty', %s, 1,"
            " 'ready') returning id", (owner, uuid.uuid4().hex)).fetchone()[0]
        hits = search(conn, owner_id=owner, query_text="zzz", query_embedding=query,
                      params=SearchParams(k=40, mode="dense", candidates=40, per_parent=False),
                      document_ids=[doc, other])
        assert len(hits) == 40



def _bulk_document(conn, owner: int, rng, n: int) -> tuple[uuid.UUID, list[int], np.ndarray]:
    """A ready document of `n` random unit vectors (its `children` count set, as ingestion does)."""
    doc = conn.execute(
        "insert into documents (owner_id, name, content_hash, size_bytes, status, children) values"
        " (%s, 'bulk', %s, 1, 'ready', %s) returning id", (owner, uuid.uuid4().hex, n)).fetchone()[0]
    parent = conn.execute(
        "insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)"
        " values (%s, %s, 0, 1, 1, 'p') returning id", (doc, owner)).fetchone()[0]
    vecs = rng.normal(size=(n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with conn.cursor() as cur, cur.copy(
        "copy child_chunks (parent_id, document_id, owner_id, ord, page, text, embedding) from stdin"
        " with (format binary)") as copy:
        copy.set_types(["int8", "uuid", "int8", "int4", "int4", "text", "vector"])
        for i, vec in enumerate(vecs):
            copy.write_row((parent, doc, owner, i, 1, f"row {i}", vec))
    ids = [r[0] for r in conn.execute("select id from child_chunks where document_id = %s order by ord",
                                      (doc,)).fetchall()]
    return doc, ids, vecs


def test_a_filings_dense_search_measures_every_chunk(db, make_user) -> None:
    """Within a filing, small or large, the dense side is exact even where the planner would walk
    the HNSW graph (enable_sort off stands in for that choice, which other stats can make:
    evals/results/search_scale_1m.md): the nearest chunks by cosine distance, none missed by the
    graph, the same on every call of a connection (the later ones on its cached generic plan)."""
    _, owner = make_user()
    rng = np.random.default_rng(1)
    with db.connection() as conn, conn.transaction():
        large = _bulk_document(conn, owner, rng, 6_000)
        small = _bulk_document(conn, owner, rng, 400)
        conn.execute("analyze child_chunks")
    query = rng.normal(size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    for doc, ids, vecs in (small, large):
        exact = [ids[i] for i in np.argsort(-(vecs @ query), kind="stable")[:60]]
        with db.connection() as conn, conn.transaction():
            conn.execute("set local enable_sort = off")
            for _ in range(7):  # psycopg prepares the statement after five
                hits = search(conn, owner_id=owner, query_text="zzz", query_embedding=query,
                              params=SearchParams(k=60, mode="dense", candidates=60, per_parent=False),
                              document_ids=[doc])
                assert [h.child_id for h in hits] == exact


def crashed_claim(conn, job_id, max_attempts: int = 3):
    """A worker claims the job and "dies": its lease runs out without a heartbeat."""
    token = jobs.claim(conn, job_id=job_id, lease_s=0.05, max_attempts=max_attempts)
    time.sleep(0.1)
    return token


def test_interrupted_job_is_requeued_then_failed(db, settings, make_user, report) -> None:
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    with db.connection() as conn:
        # a live worker's job (lease still running) is left alone by recovery and by other claims
        assert jobs.claim(conn, job_id=sub.job_id, lease_s=60, max_attempts=3) is not None
        requeued, failed = jobs.recover_interrupted(conn, max_attempts=3)
        assert sub.job_id not in requeued + failed
        assert jobs.claim(conn, job_id=sub.job_id, lease_s=60, max_attempts=3) is None
        conn.execute("update document_jobs set lease_until = now() - interval '1 second' where id = %s",
                     (sub.job_id,))  # ... until its lease runs out: the worker died
        requeued, failed = jobs.recover_interrupted(conn, max_attempts=3)
        assert sub.job_id in requeued
        job = jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)
        assert job["status"] == "queued"
        # the queue offers it again (other tests' jobs may come first)
        seen = set()
        while (nxt := jobs.next_claimable(conn)) is not None and nxt.job_id != sub.job_id and nxt.job_id not in seen:
            seen.add(nxt.job_id)
            jobs.fail_job(conn, job_id=nxt.job_id, reason="cleared by a test")
        assert nxt == jobs.JobTarget(sub.job_id, sub.document_id, owner, "report.pdf", sub.content_hash)
        # second attempt dies too; a dead worker's job is claimable again without recovery (attempt 3) ...
        assert crashed_claim(conn, sub.job_id) is not None
        assert crashed_claim(conn, sub.job_id) is not None
        assert jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)["attempts"] == 3
        # ... and after max_attempts the next claim fails it with the stage it died in
        assert jobs.claim(conn, job_id=sub.job_id, lease_s=60, max_attempts=3) is None
        job = jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)
        assert job["status"] == "failed" and "interrupted 3 times" in job["error"] and "starting" in job["error"]
        doc_status = conn.execute("select status from documents where id = %s", (sub.document_id,)).fetchone()[0]
        assert doc_status == "failed"


def test_recovery_fails_an_exhausted_job(db, settings, make_user, report) -> None:
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    with db.connection() as conn:
        crashed_claim(conn, sub.job_id, max_attempts=1)
        requeued, failed = jobs.recover_interrupted(conn, max_attempts=1)
        assert sub.job_id in failed and sub.job_id not in requeued
        assert "interrupted 1 times" in jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)["error"]


def test_requeued_job_runs_to_the_end(db, settings, embedder, make_user, report) -> None:
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    with db.connection() as conn:
        crashed_claim(conn, sub.job_id)
        jobs.recover_interrupted(conn, max_attempts=3)
    outcome = run_job(db, settings, embedder, sub.job_id)
    assert outcome.status == "ready" and outcome.children > 0
    # run again (a redelivery): the job is done, nothing is claimed and nothing is written twice
    with pytest.raises(jobs.JobBusy):
        run_job(db, settings, embedder, sub.job_id)
    with db.connection() as conn:
        assert conn.execute("select count(*) from child_chunks where document_id = %s",
                            (sub.document_id,)).fetchone()[0] == outcome.children


def test_a_taken_over_job_writes_nothing(db, settings, embedder, make_user, report) -> None:
    """A worker that lost its lease (stalled, then another worker took over) stores nothing: the
    store transaction checks the claim first, so a document's chunks are written once."""
    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    with db.connection() as conn:
        stale = crashed_claim(conn, sub.job_id)
        fresh = jobs.claim(conn, job_id=sub.job_id, lease_s=60, max_attempts=3)
        assert fresh is not None and fresh != stale
        with pytest.raises(jobs.JobCancelled), conn.transaction():
            jobs.hold(conn, job_id=sub.job_id, claim=stale)
        assert not jobs.set_progress(conn, job_id=sub.job_id, stage="embedding", percent=50, claim=stale)
        assert not jobs.fail_job(conn, job_id=sub.job_id, reason="from the stale worker", claim=stale)
        assert jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)["status"] == "processing"


def test_deleting_the_document_cancels_its_running_job(db, settings, embedder, make_user, report) -> None:
    """Delete during embedding: the job stops at its next progress report, with no foreign-key error."""
    from storage.documents import delete_document

    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)
    seen: list[str] = []

    def progress(stage: str, percent: float) -> None:
        seen.append(stage)
        if stage == "embedding" and seen.count("embedding") == 2:
            with db.connection() as conn:
                assert delete_document(conn, owner_id=owner, document_id=sub.document_id)

    outcome = run_job(db, settings, embedder, sub.job_id, progress)
    assert outcome.status == "cancelled" and "storing" not in seen
    with db.connection() as conn:
        assert conn.execute("select count(*) from parent_chunks where document_id = %s",
                            (sub.document_id,)).fetchone()[0] == 0


def test_a_crashed_job_fails_with_its_document(db, settings, make_user, report, monkeypatch) -> None:
    """The worker's last guard: run_job raising still leaves the job and its document failed."""
    import jobqueue.worker
    from storage.documents import get_document

    _, owner = make_user()
    sub = submit_pdf(db, settings, owner_id=owner, name="report.pdf", data=report)

    class Files:
        def ensure_local(self, owner_id: int, content_hash: str) -> None: ...
        def ingested(self, owner_id: int, content_hash: str) -> None: ...

    def crash(*args, **kwargs):
        raise RuntimeError("segfault in a parser")

    monkeypatch.setattr(jobqueue.worker, "run_job", crash)
    worker = jobqueue.worker.IngestWorker(db, settings, Files(), embedder=object())
    with db.connection() as conn:
        worker.run(jobs.job_target(conn, job_id=sub.job_id))
        job = jobs.get_job(conn, owner_id=owner, job_id=sub.job_id)
        doc = get_document(conn, owner_id=owner, document_id=sub.document_id)
    assert job["status"] == "failed" and "internal error" in job["error"]
    assert doc["status"] == "failed" and doc["error"] == job["error"]


def test_external_database_url_is_used_as_is(db, settings) -> None:
    """DATABASE_URL (e.g. a Supabase direct connection string) bypasses the embedded server.

    The stand-in external server is the test's own real Postgres, reached by its URI."""
    from storage.db import open_database

    external = settings.model_copy(update={"database_url": db.uri + "&application_name=external-test"})
    ext = open_database(external)
    try:
        assert ext.mode == "external" and ext is not db
        with ext.connection() as conn:
            assert conn.execute("show application_name").fetchone()[0] == "external-test"
            assert pending_migrations(conn) == []
    finally:
        ext.close()


def test_equally_busy_workspaces_are_listed_newest_first(db, make_user) -> None:
    # the admin list is capped (storage/workspace_metrics.py MAX_LISTED): with more idle workspaces than
    # the cap, one made a moment ago must be on it, not only the oldest (the full suite had 120)
    from storage import workspace_metrics, workspaces

    _name, owner = make_user("idle")
    with db.connection() as conn:
        made = [workspaces.create(conn, user_id=owner, name=f"idle {n}")["id"] for n in range(3)]
        listed = [w["id"] for w in workspace_metrics.every(conn, hours=1, limit=100_000)["workspaces"]]
    assert [w for w in listed if w in made] == made[::-1]
