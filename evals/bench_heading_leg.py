"""The statement-heading leg alone, before and after sql/020: same ranks, and what each costs.

    python evals/bench_heading_leg.py --home DIR [--user bench] [--repeats 3]

For every development question on the user's filings, within its filing and across the user's
filings, runs the leg as sql/011 defined it (a weight-A phrase match over child_chunks.tsv, every
user's chunks behind its GIN index) and as sql/020 defines it (the scope's rows of
heading_postings), checks that both rank the same chunks in the same order, and times each
(database only, interleaved, median and p95 over questions x repeats). Run it on a home that
bench_search.py has filled to the size of interest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, open_bench, write_result
from evals.scoring import nearest_rank

HEADING_QUERY = """
with heading_query as (
    select string_agg('(' || regexp_replace(phraseto_tsquery('english', h.phrase)::text,
                                            '''([^'']+)''', '''\\1'':A', 'g') || ')', ' | ')::tsquery as q
    from (select distinct unnest(g.headings) as phrase
          from query_glossary g
          where %(text)s ~* g.pattern) h
)
"""
LEGS = {
    "before (sql/011: child_chunks.tsv GIN)": HEADING_QUERY + """
select h.id from (
    select c.id, c.embedding <=> %(vec)s::vector as distance
    from child_chunks c, heading_query hq
    where hq.q is not null and c.owner_id = %(owner)s
      and (%(docs)s::uuid[] is null or c.document_id = any (%(docs)s::uuid[]))
      and c.tsv @@ hq.q
    order by 2 nulls last, c.id limit 50) h
""",
    "after (sql/020: heading_postings)": HEADING_QUERY + """
select h.id from (
    select c.id, c.embedding <=> %(vec)s::vector as distance
    from heading_query hq
    join heading_postings hp on hp.owner_id = %(owner)s
                            and (%(docs)s::uuid[] is null or hp.document_id = any (%(docs)s::uuid[]))
                            and hp.heading_tsv @@ hq.q
    cross join lateral unnest(hp.child_ids) as u(child_id)
    join child_chunks c on c.id = u.child_id and c.owner_id = %(owner)s
    where hq.q is not null
    order by 2 nulls last, c.id limit 50) h
""",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="heading_leg")
    args = parser.parse_args()
    _settings, db, embedder, owner, _docs = open_bench(args.home, args.user)
    with db.connection() as conn:
        docs = dict(conn.execute("select name, id from documents where owner_id = %s and status = 'ready'",
                                 (owner,)).fetchall())
        total = conn.execute("select count(*) from child_chunks").fetchone()[0]
        rows, mb = conn.execute("select count(*), pg_total_relation_size('heading_postings') / 1048576.0"
                                " from heading_postings").fetchone()
    questions = [q for q in load_jsonl(FINANCEBENCH / "questions.jsonl") if q["doc_name"] + ".pdf" in docs]
    vectors = {q["question"]: embedder.embed_query(q["question"]).tolist() for q in questions}
    ms: dict[str, list[float]] = {}
    matched = {"within_document": 0, "all_filings": 0}
    differ = []
    load_start = os.getloadavg()
    with db.connection() as conn:
        for rep in range(args.repeats + 1):  # the first pass warms the caches and is not timed
            for q in questions:
                for scope in ("within_document", "all_filings"):
                    params = {"text": q["question"], "vec": vectors[q["question"]], "owner": owner,
                              "docs": [docs[q["doc_name"] + ".pdf"]] if scope == "within_document" else None}
                    ranks = {}
                    for leg, sql in LEGS.items():
                        t0 = time.perf_counter()
                        ranks[leg] = [r[0] for r in conn.execute(sql, params).fetchall()]
                        if rep:
                            ms.setdefault(f"{scope} | {leg}", []).append((time.perf_counter() - t0) * 1000)
                    if rep == 0:
                        before, after = ranks.values()
                        matched[scope] += bool(before)
                        if before != after:
                            differ.append((scope, q["question"]))
    load_end = os.getloadavg()
    summary = {k: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(nearest_rank(v, 0.95), 1), "n": len(v)}
               for k, v in ms.items()}
    lines = [f"| scope, leg | p50 / p95 ms at {total:,} chunks |", "|---|---|"]
    lines += [f"| {k} | {s['p50_ms']} / {s['p95_ms']} |" for k, s in summary.items()]
    md = "\n".join(lines) + (
        f"\n\n{len(questions)} development questions on the user's {len(docs)} filings, each within its filing and "
        f"across them; the leg alone (the database's part: the question's glossary headings, the match, the 50 "
        f"nearest matching chunks), {args.repeats} timed passes after one warm-up. The leg matched something for "
        f"{matched['within_document']} questions within the filing and {matched['all_filings']} across; "
        f"the two definitions ranked differently in {len(differ)} of {2 * len(questions)} question scopes. "
        f"heading_postings: {rows:,} rows, {float(mb):.1f} MB for the whole table. "
        f"Load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end (2 cores shared with other "
        f"sessions).\n")
    write_result(args.name, {"child_chunks": total, "heading_postings": {"rows": rows, "mb": round(float(mb), 1)},
                             "questions": len(questions), "matched": matched,
                             "differ": differ, "latency": summary,
                             "load_average": {"start": load_start, "end": load_end}}, md)
    print(md)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
