"""Fixtures for graph tests: a small report ingested for a fresh user, and what a run is handed."""

from __future__ import annotations

from typing import Any

import pytest

from evals.pdfs import AURORA_TOPICS as TOPICS
from evals.pdfs import long_report
from graph.stream import run_config, run_context
from providers.reranker import NoReranker
from runtime import Runtime


@pytest.fixture
def report_owner(make_user, ingest) -> tuple[int, str]:
    """(owner id, document id) of a user who owns one 8-page report."""
    _name, owner_id = make_user("graph")
    submission, outcome = ingest(owner_id, "aurora-report.pdf", long_report(TOPICS, pages_per_topic=2))
    assert outcome is not None and outcome.status == "ready", outcome
    return owner_id, str(submission.document_id)


@pytest.fixture
def make_parts(runtime, db, embedder):
    """A runtime of the test's chain and web search over the real database and embedder; the
    classifiers are the session runtime's (loaded once for the run)."""

    def make(chain: Any, web: Any = None, database: Any = None) -> Runtime:
        return Runtime(runtime.settings, chain=chain, embedder=embedder, reranker=NoReranker(), web=web,
                       database=database or db, guard=runtime.guard, screen=runtime.screen)

    return make


@pytest.fixture
def make_run(make_parts):
    """What `graph.invoke(inputs, **run)` takes: the run's config (who asks, its knobs) and the LangGraph
    context the product builds from it (graph/stream.py) over a runtime of fakes."""

    def make(owner_id: int, chain: Any, web: Any = None, database: Any = None,
             **tunables: Any) -> dict[str, Any]:
        parts = make_parts(chain, web, database)
        # HyDE on unless a test says otherwise: the path tests walk every node (the default is off)
        config = run_config(owner_id=owner_id, user=parts.settings.users.default_user,
                            tunables={"hyde": True, **tunables})
        return {"config": config, "context": run_context(parts, config)}

    return make
