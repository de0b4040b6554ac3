"""evals/testset.py: RAGAS's generator driven by a scripted chat model through the real LLMChain, and the
retrieval gate (real embedded Postgres, real embedder) with its exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import pdfs, testset
from evals.pdfs import AURORA_TOPICS as TOPICS
from tests.support.fakes import scripted_chain
from tests.support.schema_replies import schema_reply


@pytest.fixture(scope="module")
def report(db, embedder, settings):
    """(user name, owner id, document id) of a user owning one 8-page report."""
    import uuid

    from ingestion.pipeline import run_job, submit_pdf
    from storage.users import get_or_create_user

    name = f"gen-{uuid.uuid4().hex[:8]}"
    with db.connection() as conn:
        owner = get_or_create_user(conn, name)
    sub = submit_pdf(db, settings, owner_id=owner, name="aurora.pdf", data=pdfs.long_report(TOPICS, 2))
    assert run_job(db, settings, embedder, sub.job_id).status == "ready"
    return name, owner, str(sub.document_id)


def test_parent_chunks_carry_their_source(db, report) -> None:
    _name, owner, doc = report
    chunks = testset.parent_chunks(db, owner, documents=1, per_document=2, min_chars=200)
    assert 1 <= len(chunks) <= 2
    for c in chunks:
        assert c["document_id"] == doc and c["name"] == "aurora.pdf" and 1 <= c["page"] <= c["page_end"] <= 8
    docs = testset.as_documents(chunks)
    assert docs[0].metadata["name"] == "aurora.pdf" and "text" not in docs[0].metadata


def test_ragas_generator_with_scripted_model(db, embedder, report) -> None:
    _name, owner, _doc = report
    chunks = testset.parent_chunks(db, owner, documents=1, per_document=2, min_chars=200)

    def script(kind: str, prompt: str) -> str:
        reply = schema_reply(prompt, text="What was Aurora Widgets' total revenue in fiscal 2023?")
        assert reply is not None, prompt[:300]  # RAGAS asks for JSON only
        return reply

    chain, model = scripted_chain(script)
    rows = testset.generate_ragas(chunks, 2, chain, embedder, timeout_s=120)
    assert len(rows) == 2
    for row in rows:
        assert row["question"] and row["reference"] and row["synthesizer"]
        # the source chunk is found again from the sample's reference context
        assert row["source_name"] == "aurora.pdf" and row["source_parent_id"] in {c["parent_id"] for c in chunks}
    assert model.calls  # every RAGAS call went through the product's chain


def test_chain_generator(db, report) -> None:
    _name, owner, _doc = report
    chunks = testset.parent_chunks(db, owner, documents=1, per_document=1, min_chars=200)
    chain, _model = scripted_chain(lambda kind, prompt: schema_reply(prompt, text="Revenue?") or "")
    rows = testset.generate_chain(chunks, 1, chain)
    assert rows[0]["question"] == "Revenue?" and rows[0]["source_page"] == chunks[0]["page"]


def test_gate_exit_code(db, runtime, report, tmp_path: Path) -> None:
    name, owner, doc = report
    chunks = testset.parent_chunks(db, owner, documents=1, per_document=8, min_chars=200)
    # questions whose answers are on a known chunk: each chunk's own topic sentence
    rows = []
    for c in chunks:
        topic = next(t for t in TOPICS if t in c["text"])
        rows.append({"question": topic.replace("reported", "report") + "?", "reference": topic,
                     **testset._source(c)})
    path = tmp_path / "testset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert testset.main(["gate", str(path), "--user", name, "--floor", "0.5", "--name", "gate",
                         "--results-dir", str(tmp_path)], runtime) == 0
    result = json.loads((tmp_path / "gate.json").read_text())
    assert result["hit@5"] >= 0.5 and result["n"] == len(rows) and result["passed"] is True
    # an unreachable floor fails
    assert testset.main(["gate", str(path), "--user", name, "--floor", "1.01"], runtime) == 1
