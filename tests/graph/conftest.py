"""Fixtures for graph tests: a small report ingested for a fresh user, and a config builder."""

from __future__ import annotations

from typing import Any

import pytest
from graph.services import Services

from evals.pdfs import AURORA_TOPICS as TOPICS
from evals.pdfs import long_report
from providers.reranker import NoReranker


@pytest.fixture
def report_owner(make_user, ingest) -> tuple[int, str]:  # noqa: ANN001
    """(owner id, document id) of a user who owns one 8-page report."""
    _name, owner_id = make_user("graph")
    submission, outcome = ingest(owner_id, "aurora-report.pdf", long_report(TOPICS, pages_per_topic=2))
    assert outcome is not None and outcome.status == "ready", outcome
    return owner_id, str(submission.document_id)


@pytest.fixture
def make_config(db, embedder):  # noqa: ANN001, ANN201
    def make(owner_id: int, chain: Any, web: Any = None, database: Any = None,  # noqa: ANN401
             **configurable: Any) -> dict[str, Any]:  # noqa: ANN401
        services = Services(chain=chain, embedder=embedder, reranker=NoReranker(), web=web,
                            database=database or db)
        # HyDE on unless a test says otherwise: the path tests walk every node (the default is off)
        return {"configurable": {"services": services, "owner_id": owner_id, "hyde": True, **configurable}}

    return make
