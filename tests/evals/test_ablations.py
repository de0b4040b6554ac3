"""evals/ablations.py's retrieval hit: the graph's own retrieve and rerank nodes, called outside the graph with
the runtime context the graph would give them (real embedded Postgres, real embedder)."""

from __future__ import annotations

import uuid

import pytest

from evals import ablations, pdfs
from evals.pdfs import AURORA_TOPICS as TOPICS
from graph.stream import run_config

DIVIDEND = {"question": "What quarterly dividend did the board of Aurora Widgets declare?", "doc_name": "aurora",
            "evidence": [{"doc_name": "aurora", "evidence_page_num": 6}]}  # pages 7-8 hold it


@pytest.fixture(scope="module")
def report(db, settings, embedder):
    """(user name, owner id, document id) of a user owning the 8-page Aurora report."""
    from ingestion.pipeline import run_job, submit_pdf
    from storage.users import get_or_create_user

    name = f"abl-{uuid.uuid4().hex[:8]}"
    with db.connection() as conn:
        owner = get_or_create_user(conn, name)
    sub = submit_pdf(db, settings, owner_id=owner, name="aurora.pdf", data=pdfs.long_report(TOPICS, 2))
    assert run_job(db, settings, embedder, sub.job_id).status == "ready"
    return name, owner, str(sub.document_id)


@pytest.mark.parametrize("reranker", ["none", "dense"])
def test_retrieval_hit_through_the_nodes(runtime, report, reranker: str) -> None:
    name, owner, doc = report
    config = run_config(owner_id=owner, user=name, tunables={"web_search": False, "reranker": reranker, "top_k": 5})
    assert ablations.retrieval_hit(DIVIDEND, doc, config, runtime)
    # the question's document scopes the search: another id finds nothing, so no hit
    assert not ablations.retrieval_hit(DIVIDEND, str(uuid.uuid4()), config, runtime)
