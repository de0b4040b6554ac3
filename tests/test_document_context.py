"""Against the real embedded Postgres: ingestion stores what a filing says it is, every chunk heading
starts with it (embedded and full-text indexed), searches narrow by it for the caller's own documents
only, a question naming a period finds that period's filing first, a question naming a company
searches that company's filings, and `thotqen reindex --context`
gives documents stored the old way their context."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from evals import pdfs
from ingestion.pipeline import display_title, embedding_text
from ingestion.recontext import recontext, recontext_document
from storage import documents
from storage.document_filter import (
    DocumentFilter,
    matching_documents,
    named_documents,
    owner_values,
    question_scope,
)
from storage.search import SearchParams, search
from tests.unit.test_context import COVER_10K, COVER_10Q, STATEMENTS_Q2

BODY = ("Results of operations. Net sales of the Lighting segment rose because of strong demand for lamps "
        "and fixtures in Europe, while freight costs fell. ") * 8


def filing(cover: str, *pages: str) -> bytes:
    return pdfs.text_pdf([cover, *pages])


def ten_k(year: int) -> bytes:
    cover = COVER_10K.replace("December 31, 2022", f"December 31, {year}")
    return filing(cover, f"Item 7. Management's discussion. {BODY}", f"Item 8. Financial statements. {BODY}")


@pytest.fixture(scope="module")
def ten_q() -> bytes:
    return filing(COVER_10Q, STATEMENTS_Q2, f"Item 2. Management's discussion. {BODY}")


def document_row(db, document_id):
    with db.connection() as conn:
        return conn.execute("select company, form, period, period_end from documents where id = %s",
                            (document_id,)).fetchone()


def rerun(db, embedder, document_id) -> int:
    """recontext once more, for this document only (other tests' documents may still be ingesting)."""
    with db.connection() as conn:
        [doc] = [d for d in documents.ready_documents_of_all(conn) if d.document_id == document_id]
    return recontext_document(db, embedder, doc)


def headings(db, document_id) -> list[str]:
    with db.connection() as conn:
        return [r[0] for r in conn.execute("select heading from child_chunks where document_id = %s order by ord",
                                           (document_id,)).fetchall()]


def test_ingestion_stores_the_context_and_heads_every_chunk_with_it(db, make_user, ingest) -> None:
    _name, owner = make_user("ctx")
    sub, outcome = ingest(owner, "download (3).pdf", ten_k(2022))
    assert outcome.status == "ready"
    assert document_row(db, sub.document_id) == ("Northwind Traders, Inc.", "10-K", "FY2022", date(2022, 12, 31))
    heads = headings(db, sub.document_id)
    assert heads and all(h.startswith("Northwind Traders · 10-K · FY2022 (fiscal 2022)") for h in heads)
    assert not any("download" in h for h in heads)
    with db.connection() as conn:  # the heading is in the full-text index with weight A
        weighted = conn.execute(
            "select count(*) from child_chunks where document_id = %s and tsv @@ to_tsquery('english', 'fy2022:A')"
            " and tsv @@ to_tsquery('english', 'northwind:A')", (sub.document_id,)).fetchone()[0]
    assert weighted == len(heads)


def test_a_document_that_says_nothing_keeps_its_file_name(db, make_user, ingest) -> None:
    _name, owner = make_user("plain")
    sub, _ = ingest(owner, "lamp_notes.pdf", pdfs.text_pdf([f"Some notes. {BODY}", BODY]))
    assert document_row(db, sub.document_id) == (None, None, None, None)
    assert all(h.startswith("lamp notes") or h.startswith("Some notes") for h in headings(db, sub.document_id))


def test_filters_match_the_owners_documents_only(db, embedder, make_user, ingest, ten_q) -> None:
    _a, alice = make_user("alice")
    _b, bob = make_user("bob")
    k22, _ = ingest(alice, "a.pdf", ten_k(2022))
    q2, _ = ingest(alice, "b.pdf", ten_q)
    bobs, _ = ingest(bob, "c.pdf", ten_k(2022))  # the same filing, his own copy

    def ids(owner: int, docs=None, **where: str) -> set:
        with db.connection() as conn:
            return set(matching_documents(conn, owner_id=owner, where=DocumentFilter(**where), document_ids=docs))

    assert ids(alice, company="northwind") == {k22.document_id}
    assert ids(alice, company="CONTOSO", form="10q") == {q2.document_id}
    assert ids(alice, period="fiscal 2022") == {k22.document_id}
    assert ids(alice, period="FY22", form="10-K") == {k22.document_id}
    assert ids(alice, period="Q2 2023") == {q2.document_id}  # the quarter ended July 1, 2023
    assert ids(alice, period="2023") == {q2.document_id}
    assert ids(alice, period="Q3 2023") == set()
    assert ids(alice, company="northwind", form="8-K") == set()
    assert ids(bob, company="northwind") == {bobs.document_id}
    assert ids(alice, docs=[bobs.document_id], company="northwind") == set()  # a stranger's id never matches
    assert ids(alice, company="100%_") == set()  # LIKE characters are literal

    query = "net sales of the Lighting segment"
    with db.connection() as conn:
        def hits(owner: int, docs=None, **where: str) -> list:
            return search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                          params=SearchParams(k=5), document_ids=docs, where=DocumentFilter(**where))

        assert {h.document_id for h in hits(alice)} == {k22.document_id, q2.document_id}
        assert {h.document_id for h in hits(alice, form="10-Q")} == {q2.document_id}
        assert hits(alice, company="no such company") == []
        assert hits(alice, docs=[bobs.document_id], form="10-K") == []
        assert {h.document_id for h in hits(bob, company="northwind")} == {bobs.document_id}


def test_a_question_naming_a_period_finds_that_filing_first(db, embedder, make_user, ingest) -> None:
    _name, owner = make_user("periods")
    # the same text in two years' filings, under names that say nothing
    older, _ = ingest(owner, "download (1).pdf", ten_k(2021))
    newer, _ = ingest(owner, "download (2).pdf", ten_k(2022))
    for query, wanted in [("Northwind Traders FY2021 net sales of the Lighting segment", older),
                          ("Lighting segment net sales in fiscal 2022", newer)]:
        with db.connection() as conn:
            top = search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                         params=SearchParams(k=3))
        assert top[0].document_id == wanted.document_id, (query, [h.document_name for h in top])


def test_reindex_context_gives_old_documents_their_context(db, embedder, make_user, ingest) -> None:
    _name, owner = make_user("old")
    sub, _ = ingest(owner, "northwind_2022.pdf", ten_k(2022))
    new_heads = headings(db, sub.document_id)
    old_front = display_title("northwind_2022.pdf")
    with db.connection() as conn:  # as ingestion wrote it before: the file name in front, no context
        conn.execute("update documents set company = null, form = null, period = null, period_end = null"
                     " where id = %s", (sub.document_id,))
        conn.execute("update child_chunks set heading = %s || substr(heading, position(' — ' in heading))"
                     " where document_id = %s and position(' — ' in heading) > 0", (old_front, sub.document_id))
        conn.execute("select refresh_term_postings(%s)", (sub.document_id,))
    assert all(h.startswith(old_front) for h in headings(db, sub.document_id))

    outcome = recontext(db, embedder)
    assert outcome.documents >= 1 and outcome.chunks >= len(new_heads)
    assert document_row(db, sub.document_id) == ("Northwind Traders, Inc.", "10-K", "FY2022", date(2022, 12, 31))
    redone = headings(db, sub.document_id)  # the context in front again; the page title as far as the budget goes
    assert all(h.startswith("Northwind Traders · 10-K · FY2022") and fresh.startswith(h)
               for h, fresh in zip(redone, new_heads, strict=True))
    with db.connection() as conn:
        heading, text, vector = conn.execute(
            "select heading, text, embedding from child_chunks where document_id = %s order by ord limit 1",
            (sub.document_id,)).fetchone()
        postings = conn.execute("select count(*) from term_stats where document_id = %s and lexeme = 'fy2022'",
                                (sub.document_id,)).fetchone()[0]
    assert np.allclose(vector.to_numpy(), embedder.embed_documents([embedding_text(heading, text)])[0], atol=1e-3)
    assert postings == 1
    assert rerun(db, embedder, sub.document_id) == 0  # done once: nothing to re-embed


def test_reindex_context_leaves_a_context_cut_by_the_heading_budget_alone(db, embedder, make_user, ingest) -> None:
    # a company name longer than the heading budget: ingestion cut the context itself; a rerun must
    # see that as done rather than rewrite (and re-embed) those headings every time
    long_name = "Northwind Traders International Consolidated Holdings and Subsidiaries of the Pacific Rim, Inc."
    _name, owner = make_user("long")
    data = filing(COVER_10K.replace("NORTHWIND TRADERS, INC.", long_name.upper()),
                  f"Item 7. Management's discussion. {BODY}", f"Item 8. Financial statements. {BODY}")
    sub, _ = ingest(owner, "long.pdf", data)
    recontext(db, embedder)
    before = headings(db, sub.document_id)
    assert rerun(db, embedder, sub.document_id) == 0
    assert headings(db, sub.document_id) == before


def test_a_question_naming_a_company_searches_that_companys_filings(db, embedder, make_user, ingest,
                                                                    ten_q) -> None:
    _name, owner = make_user("named")
    _other, stranger = make_user("named-other")
    older, _ = ingest(owner, "n1.pdf", ten_k(2021))
    newer, _ = ingest(owner, "n2.pdf", ten_k(2022))
    contoso, _ = ingest(owner, "c.pdf", ten_q)
    plain, _ = ingest(owner, "notes.pdf", pdfs.text_pdf([f"Some notes. {BODY}", BODY]))  # says no company
    theirs, _ = ingest(stranger, "s.pdf", ten_k(2022))

    def named(question: str, owner_id: int = owner, docs=None) -> set | None:
        with db.connection() as conn:
            found = named_documents(conn, owner_id=owner_id, question=question, document_ids=docs)
        return None if found is None else set(found)

    northwind = {older.document_id, newer.document_id, plain.document_id}
    assert named("What were Northwind Traders' net sales of lamps?") == northwind
    # the year's filing first; the later one (it holds 2021 as comparatives) and the unread one kept below
    assert named("Northwind Traders net sales in FY2021") == northwind
    with db.connection() as conn:
        in_2021 = named_documents(conn, owner_id=owner, question="Northwind Traders net sales in FY2021")
    assert in_2021 is not None and in_2021[0] == older.document_id and in_2021[-1] == plain.document_id
    assert named("Northwind Traders net sales in FY2019") == northwind  # no such year: the company's
    assert named("Contoso corp. quarterly net sales") == {contoso.document_id, plain.document_id}
    assert named("contoso quarterly net sales") is None  # a one-word name is written capitalised
    assert named("Net sales of the Lighting segment") is None  # no company named
    assert named("Compare Northwind Traders with Contoso") is None  # every company named
    with db.connection() as conn:  # both named, one year: that year's filing first, the rest after it
        scope = question_scope(conn, owner_id=owner, question="Northwind Traders and Contoso in fiscal 2022")
    assert scope is not None and scope.tiers[0] == (newer.document_id,) and scope.certain
    assert named("Northwind Traders", docs=[older.document_id, contoso.document_id]) == {older.document_id}
    assert named("Northwind Traders", docs=[theirs.document_id]) is None  # a stranger's id never counts
    assert named("Northwind Traders net sales", owner_id=stranger) is None  # his only company

    query = "Northwind Traders net sales of the Lighting segment"
    with db.connection() as conn:
        def found(on: bool) -> set:
            hits = search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                          params=SearchParams(k=10, scope_from_question=on))
            return {h.document_id for h in hits}

        assert contoso.document_id in found(False)  # the same text is in Contoso's filing
        assert found(True) <= northwind and found(True)


def test_a_renamed_issuer_is_found_under_either_name_and_an_unread_cover_ranks_below(
        db, embedder, make_user, ingest) -> None:
    _name, owner = make_user("renamed")
    _other, stranger = make_user("renamed-other")
    cover_2019 = COVER_10K.replace("December 31, 2022", "December 31, 2019").replace(
        "NORTHWIND TRADERS, INC.", "NORTHWIND SYSTEMS INCORPORATED")
    cover_2022 = COVER_10K.replace("NORTHWIND TRADERS, INC.", "TAILSPIN, INC.")  # the same file number
    old, _ = ingest(owner, "r1.pdf", filing(cover_2019, f"Item 7. {BODY}", f"Item 8. {BODY}"))
    new, _ = ingest(owner, "r2.pdf", filing(cover_2022, f"Item 7. {BODY}", f"Item 8. {BODY}"))
    unread, _ = ingest(owner, "r3.pdf", filing(f"Lighting review, 2019. {BODY}", BODY))  # no cover to read
    contoso, _ = ingest(owner, "r4.pdf", filing(COVER_10Q, STATEMENTS_Q2, BODY))
    theirs, _ = ingest(stranger, "r5.pdf", filing(cover_2019, BODY))

    def scope(question: str, owner_id: int = owner):
        with db.connection() as conn:
            return question_scope(conn, owner_id=owner_id, question=question)

    # the issuer's newer name, a year only its older filing covers: that filing first
    found = scope("Tailspin lighting net sales in fiscal 2019")
    assert found is not None and found.tiers[0] == (old.document_id,) and found.certain
    assert contoso.document_id not in found.documents() and theirs.document_id not in found.documents()
    # the unread document stays in, below the issuer's filings
    assert found.documents().index(unread.document_id) > found.documents().index(new.document_id)
    found = scope("Northwind Systems lighting net sales")  # the older name finds both
    assert found is not None and {old.document_id, new.document_id} <= set(found.tiers[0])
    query = "Tailspin net sales of the Lighting segment in 2019"
    with db.connection() as conn:
        hits = search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                      params=SearchParams(k=5))
    assert hits[0].document_id == old.document_id
    # the owner says what the unread one is; reading its context again keeps it
    with db.connection() as conn:
        assert not documents.set_owner_context(conn, owner_id=stranger, document_id=unread.document_id,
                                               company="Tailspin, Inc.")  # not his: as if missing
        assert documents.set_owner_context(conn, owner_id=owner, document_id=unread.document_id,
                                           **owner_values("Tailspin, Inc.", "10k", "fy19"))
    rerun(db, embedder, unread.document_id)
    assert document_row(db, unread.document_id) == ("Tailspin, Inc.", "10-K", "FY2019", None)
    found = scope("Tailspin lighting net sales in fiscal 2019")
    assert found is not None and set(found.tiers[0]) == {old.document_id, unread.document_id}
