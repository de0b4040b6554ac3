"""Tables stored: the cells of an ingested statement are owner-scoped, deleted with the document,
locked like every table, and filled in by `reindex --tables` (reading them: tests/unit/test_tables.py)."""

from __future__ import annotations

import pytest

from ingestion.retable import retable
from storage import documents, tables
from tests.unit.test_tables import CASH_FLOWS, INCOME_IN_THOUSANDS


def test_cells_stored_owner_scoped_and_deleted_with_document(db, ingest, make_user) -> None:
    _, ann = make_user("ann")
    _, bob = make_user("bob")
    sub, outcome = ingest(ann, "northwind-2023.pdf", INCOME_IN_THOUSANDS)
    assert outcome.status == "ready"
    with db.connection() as conn:
        found = tables.find_cells(conn, owner_id=ann, text="net revenue", fiscal_year=2022)
        assert found and found[0].label == "Net revenue" and found[0].value_text == "1,512,300"
        assert found[0].amount == 1_512_300_000 and found[0].child_id is not None
        assert found[0].box is not None and len(found[0].box) == 4
        assert tables.find_cells(conn, owner_id=ann, text="net revenue", document_ids=[sub.document_id],
                                 fiscal_year=2023)[0].value == 1693954.0
        # a stranger finds nothing, even naming the document
        assert tables.find_cells(conn, owner_id=bob, text="net revenue") == []
        assert tables.find_cells(conn, owner_id=bob, text="net revenue", document_ids=[sub.document_id]) == []
        assert tables.document_cells(conn, owner_id=bob, document_id=sub.document_id) == []
        mine = tables.document_cells(conn, owner_id=ann, document_id=sub.document_id)
        assert {c.label for c in mine} >= {"Net revenue", "Cost of revenue", "Diluted earnings per share"}
        assert next(c for c in mine if c.label == "Cost of revenue").path == "Operating expenses › Cost of revenue"
        assert documents.delete_document(conn, owner_id=ann, document_id=sub.document_id)
        left = conn.execute("select count(*) from table_cells where document_id = %s", (sub.document_id,))
        assert left.fetchone()[0] == 0


def test_reindex_tables_fills_an_install_that_had_none(db, settings, ingest, make_user) -> None:
    _, owner = make_user("old")
    sub, _ = ingest(owner, "contoso-flows.pdf", CASH_FLOWS)
    with db.connection() as conn:  # as stored before tables were read
        conn.execute("delete from table_cells where document_id = %s", (sub.document_id,))
        conn.execute("update documents set tables_version = null where id = %s", (sub.document_id,))
        assert tables.find_cells(conn, owner_id=owner, text="net cash provided by operating activities") == []
    ticks: list[tuple[int, int]] = []
    outcome = retable(db, settings, lambda _owner, done, total: ticks.append((done, total)))
    # the session database holds other tests' documents too, some with their stored file deleted on purpose
    mine = [f for f in outcome.failed if f.startswith("contoso-flows")]
    assert outcome.documents >= 1 and outcome.cells > 0 and not mine and ticks[-1][0] == ticks[-1][1]
    with db.connection() as conn:
        found = tables.find_cells(conn, owner_id=owner, text="net cash provided by operating activities",
                                  fiscal_year=2023)
        assert found[0].section == ["Cash flows from operating activities"] and found[0].value == 6439.0
        assert found[0].child_id is not None
        count = conn.execute("select count(*) from table_cells where document_id = %s", (sub.document_id,))
        before = count.fetchone()[0]
    again = retable(db, settings)
    assert again.documents == 0 and again.cells == 0  # idempotent: nothing left to do
    with db.connection() as conn:
        count = conn.execute("select count(*) from table_cells where document_id = %s", (sub.document_id,))
        assert count.fetchone()[0] == before


@pytest.mark.parametrize("name", ["table_cells"])
def test_table_is_locked_like_every_table(db, name: str) -> None:
    with db.connection() as conn:
        locked = conn.execute("select relrowsecurity from pg_class where relname = %s", (name,)).fetchone()
    assert locked == (True,)
