"""Whose documents a run reads is asked of the database once, at answerable, and every node after it
reads those owners through the evidence store (graph/readers.py, graph/evidence_store.py)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from evals.fake_openai import grades_json
from graph.builder import graph
from graph.evidence_store import EvidenceStore, Shelf
from graph.stream import run_config, run_context
from storage.evidence_store import PostgresEvidence
from tests.support.fakes import scripted_chain

REVENUE = "412 million"
QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


class Counted:
    """The evidence store, recording each resolution of readers and the owners of each shelf opened;
    `then` runs right after a resolution (a membership changing a moment after the asking)."""

    def __init__(self, store: EvidenceStore, then: Any = None) -> None:
        self.store, self.then = store, then
        self.resolved: list[list[int]] = []
        self.shelves: list[list[int]] = []

    def readers(self, *, user: str, owner_id: int | None, workspace_id: int | None) -> list[int]:
        owners = self.store.readers(user=user, owner_id=owner_id, workspace_id=workspace_id)
        self.resolved.append(owners)
        if self.then is not None:
            self.then()
        return owners

    def shelf(self, owners: Sequence[int]) -> AbstractContextManager[Shelf]:
        self.shelves.append(list(owners))
        return self.store.shelf(owners)


class WithStore:
    """The test's parts with another evidence store."""

    def __init__(self, parts: Any, evidence: EvidenceStore) -> None:
        self._parts, self.evidence = parts, evidence

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parts, name)


def script(kind: str, prompt: str) -> str:
    if kind == "grade":
        return grades_json(prompt, lambda text: REVENUE in text)
    if kind == "answer":
        return "Revenue was 412 million dollars [1]."
    if kind == "hyde":
        return "Total revenue for fiscal 2023 was 412 million dollars."
    return "unexpected"


def ask(make_parts, store: Counted, owner_id: int, user: str) -> dict[str, Any]:
    chain, _model = scripted_chain(script)
    parts = WithStore(make_parts(chain), store)
    config = run_config(owner_id=owner_id, user=user, tunables={"hyde": True, "retrieve_k": 2, "top_k": 2})
    out: dict[str, Any] = graph.invoke({"question": QUESTION}, config, context=run_context(parts, config))
    return out


def test_the_owners_are_resolved_once_and_every_node_reads_them(report_owner, make_parts, db) -> None:
    owner_id, document_id = report_owner
    store = Counted(PostgresEvidence(db))
    out = ask(make_parts, store, owner_id, "graph")
    # answerable, retrieve, facts and verify each read the documents (compute too, once facts are offered);
    # one resolution for all
    assert {"answerable", "retrieve", "facts", "compute", "verify"} <= set(out["route"]), out["route"]
    assert store.resolved == [[owner_id]]
    assert len(store.shelves) >= 4 and all(owners == [owner_id] for owners in store.shelves), store.shelves
    assert out["citations"] and out["citations"][0]["document_id"] == document_id


def test_a_member_removed_after_asking_gets_the_answer_the_moment_of_asking_allowed(
        make_user, ingest, make_parts, db) -> None:
    from evals.pdfs import AURORA_TOPICS, long_report
    from storage import workspaces

    boss_name, boss = make_user("readers-boss")
    member_name, member = make_user("readers-member")
    with db.connection() as conn:
        team = int(workspaces.create(conn, user_id=boss, name=f"team-{uuid.uuid4().hex[:6]}")["id"])
        workspaces.add_member(conn, user_id=boss, workspace_id=team, username=member_name, role="viewer")
    _sub, outcome = ingest(team, "aurora-report.pdf", long_report(AURORA_TOPICS, pages_per_topic=2))
    assert outcome is not None and outcome.status == "ready", outcome

    def removed() -> None:
        with db.connection() as conn:
            workspaces.remove_member(conn, user_id=boss, workspace_id=team, username=member_name)

    store = Counted(PostgresEvidence(db), then=removed)
    out = ask(make_parts, store, member, member_name)
    assert [sorted(owners) for owners in store.resolved] == [sorted([member, team])]
    assert all(sorted(owners) == sorted([member, team]) for owners in store.shelves)
    assert out["cited"], out["answer"]  # the search read what the asker could read when they asked
    # ... and the next question, asked after the removal, reads nothing of the workspace
    after = Counted(PostgresEvidence(db))
    again = ask(make_parts, after, member, member_name)
    assert after.resolved == [[member]]
    assert not again["cited"], again["answer"]
