"""The statement-heading leg through heading_postings (sql/020) ranks exactly what the leg over the
chunks' full-text index (sql/011) ranked, sees only the owner's filings, and follows a filing's chunks."""

from __future__ import annotations

import pytest

from evals import pdfs

# The heading phrases the question's glossary entries name, as sql/011's leg built its tsquery
# (kept here from evals/bench_heading_leg.py, retired after 9b02877, which timed both legs).
HEADING_QUERY = """
with heading_query as (
    select string_agg('(' || regexp_replace(phraseto_tsquery('english', h.phrase)::text,
                                            '''([^'']+)''', '''\\1'':A', 'g') || ')', ' | ')::tsquery as q
    from (select distinct unnest(g.headings) as phrase
          from query_glossary g
          where %(text)s ~* g.pattern) h
)
"""

# The leg as sql/011_term_postings.sql defined it: weight-A phrase matches over child_chunks.tsv.
OLD_LEG = HEADING_QUERY + """
select h.id, row_number() over (order by h.distance nulls last, h.id)::integer as rnk
from (
    select c.id, c.embedding <=> %(vec)s::vector as distance
    from child_chunks c, heading_query hq
    where hq.q is not null
      and c.owner_id = %(owner)s
      and (%(docs)s::uuid[] is null or c.document_id = any (%(docs)s::uuid[]))
      and c.tsv @@ hq.q
    order by 2 nulls last, c.id
    limit 50
) h
order by 2
"""

PROSE = ("The balance sheet remained strong. Cash flows from operations and the statements of operations "
         "show gross margin and capital expenditure trends; income statement items are discussed below. ") * 5


def statements_pdf(company: str) -> bytes:
    lines = "\n".join(f"{item} {n * 7},{n}00 {n * 5},{n}10" for n, item in enumerate(
        ["Revenue", "Cost of sales", "Gross profit", "Inventories", "Accounts payable", "Purchases of equipment"], 1))
    return pdfs.text_pdf([
        f"{company} Management Discussion\n" + PROSE,
        f"Consolidated Statements of Cash Flows\n(Dollars in millions)\n{lines}\n" * 3,
        f"Consolidated Balance Sheets\n(Dollars in millions)\n{lines}\n" * 3,
        f"Consolidated Statements of Operations\n(Dollars in millions)\n{lines}\n" * 3,
        f"Risk Factors\n{PROSE}",
    ])


QUESTIONS = [
    "What is the FY2022 capital expenditure? Answer from the cash flow statement.",
    "What is the quick ratio, based on the balance sheet?",
    "What was the gross margin in FY2021?",
    "What are the days payable outstanding (DPO)?",
    "What drove revenue in the year?",  # no glossary heading: the leg stays empty
]


def new_leg(conn, owner: int, vec, text: str, docs) -> list[tuple[int, int]]:
    rows = conn.execute(
        "select child_id, heading_rank from hybrid_search(array[%s]::bigint[], %s::vector, %s, p_k => 1000,"
        " p_document_ids => %s,"
        " p_per_parent => false) where heading_rank is not null order by heading_rank",
        (owner, vec.tolist(), text, docs)).fetchall()
    return [tuple(r) for r in rows]


def test_heading_leg_ranks_what_the_full_text_leg_ranked(db, embedder, make_user, ingest) -> None:
    _, owner = make_user()
    _, stranger = make_user()
    first, _ = ingest(owner, "acme.pdf", statements_pdf("Acme"))
    second, _ = ingest(owner, "globex.pdf", statements_pdf("Globex"))
    ingest(stranger, "acme.pdf", statements_pdf("Acme"))  # the same filing under another owner
    matched = 0
    with db.connection() as conn:
        for text in QUESTIONS:
            vec = embedder.embed_query(text)
            for docs in (None, [first.document_id], [second.document_id, first.document_id]):
                old = [tuple(r) for r in conn.execute(
                    OLD_LEG, {"text": text, "vec": vec.tolist(), "owner": owner, "docs": docs}).fetchall()]
                assert new_leg(conn, owner, vec, text, docs) == old, (text, docs)
                matched += len(old)
        assert matched > 0
        owned = {r[0] for r in conn.execute("select id from child_chunks where owner_id = %s", (owner,)).fetchall()}
        vec = embedder.embed_query(QUESTIONS[0])
        assert {cid for cid, _ in new_leg(conn, owner, vec, QUESTIONS[0], None)} <= owned
        # a stranger's filing id answers like a missing one
        theirs = conn.execute("select id from documents where owner_id = %s", (stranger,)).fetchone()[0]
        assert new_leg(conn, owner, vec, QUESTIONS[0], [theirs]) == []


def test_heading_rows_follow_the_filing(db, make_user, ingest) -> None:
    _, owner = make_user()
    sub, _ = ingest(owner, "acme.pdf", statements_pdf("Acme"))
    with db.connection() as conn:
        rows = conn.execute("select heading_tsv::text, child_ids from heading_postings where document_id = %s",
                            (sub.document_id,)).fetchall()
        chunks = conn.execute("select count(*) from child_chunks where document_id = %s",
                              (sub.document_id,)).fetchone()[0]
        # one row per distinct heading; every chunk with a heading under exactly one
        assert len(rows) >= 5 and sum(len(ids) for _, ids in rows) == chunks
        assert any("'flow':" in tsv and "A" in tsv for tsv, _ in rows)
        conn.execute("select refresh_term_postings(%s)", (sub.document_id,))  # idempotent
        again = conn.execute("select count(*) from heading_postings where document_id = %s",
                             (sub.document_id,)).fetchone()[0]
        assert again == len(rows)
        conn.execute("delete from documents where id = %s", (sub.document_id,))
        assert conn.execute("select count(*) from heading_postings where document_id = %s",
                            (sub.document_id,)).fetchone()[0] == 0
        conn.rollback()


@pytest.mark.parametrize("text", ["balance sheet", "cash flow statement"])
def test_heading_leg_off_reads_nothing(db, embedder, make_user, ingest, text) -> None:
    _, owner = make_user()
    ingest(owner, "acme.pdf", statements_pdf("Acme"))
    vec = embedder.embed_query(text)
    with db.connection() as conn:
        rows = conn.execute("select count(*) from hybrid_search(array[%s]::bigint[], %s::vector, %s,"
                            " p_heading_weight => 0)"
                            " where heading_rank is not null", (owner, vec.tolist(), text)).fetchone()[0]
    assert rows == 0
