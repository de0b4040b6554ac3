"""How search cost grows with the table: latency, sizes and build times at each scale, query embedding included.

    python evals/bench_search.py --home DIR [--user bench] [--scales 65000,250000,1000000] [--modes all]

Needs the filings ingested under --home for --user (evals/bench_ingest.py). For each --scales size
(child chunks in the table, ascending) it adds copies of that user's chunks under other users
(their vectors jittered, so the HNSW graph is not full of exact duplicates) until the table holds
that many, timing the fill (inserts with their HNSW, GIN and tsvector upkeep, and the postings),
then records table and index sizes and times searches within a filing and across the user's
filings: the searching user's scope stays the same while the indexes the planner walks grow.
--modes hybrid times hybrid search only (with the statement-heading leg on and off); all adds
the dense and sparse sides alone. Results: evals/results/search_scale.{json,md} (--name).
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

FILL_SQL = """
with src as (select id from documents where owner_id = %(owner)s and status = 'ready')
insert into documents (owner_id, name, content_hash, size_bytes, status, pages)
select %(filler)s, d.name, d.content_hash, d.size_bytes, 'ready', d.pages
from documents d join src on src.id = d.id
on conflict (owner_id, content_hash) do nothing
"""

COPY_PARENTS = """
insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)
select fd.id, %(filler)s, p.ord, p.page_start, p.page_end, p.text
from parent_chunks p
join documents sd on sd.id = p.document_id and sd.owner_id = %(owner)s
join documents fd on fd.owner_id = %(filler)s and fd.content_hash = sd.content_hash
"""

COPY_CHILDREN = """
insert into child_chunks (parent_id, document_id, owner_id, ord, page, heading, text, embedding)
select fp.id, fp.document_id, %(filler)s, c.ord, c.page, c.heading, c.text,
       (select array_agg(x + (random()::real - 0.5) * 0.02) from unnest(c.embedding::real[]) x)::vector
from child_chunks c
join parent_chunks sp on sp.id = c.parent_id
join documents sd on sd.id = sp.document_id and sd.owner_id = %(owner)s
join documents fd on fd.owner_id = %(filler)s and fd.content_hash = sd.content_hash
join parent_chunks fp on fp.document_id = fd.id and fp.ord = sp.ord
"""


SIZES_SQL = """
select c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid), pg_indexes_size(c.oid)
from pg_class c where c.relname in ('child_chunks', 'parent_chunks', 'term_stats', 'child_terms')
"""
INDEX_SQL = """
select i.relname, pg_relation_size(i.oid) from pg_index x join pg_class i on i.oid = x.indexrelid
join pg_class t on t.oid = x.indrelid where t.relname in ('child_chunks', 'term_stats')
"""


def table_sizes(conn) -> dict[str, dict[str, float]]:
    """MB per table (total, heap, indexes; TOAST is in total) and per index of the two big tables."""
    mb = 1 << 20
    out = {name: {"total_mb": round(total / mb, 1), "heap_mb": round(heap / mb, 1), "indexes_mb": round(idx / mb, 1)}
           for name, total, heap, idx in conn.execute(SIZES_SQL).fetchall()}
    out["indexes"] = {name: round(size / mb, 1) for name, size in conn.execute(INDEX_SQL).fetchall()}
    return out


def fill_to(conn, owner: int, target: int) -> tuple[int, float]:
    """Add filler users' copies until the table holds `target` children; (children now, seconds)."""
    from storage.users import get_or_create_user

    started = time.perf_counter()
    filler_n = conn.execute("select count(*) from users where username like 'filler-%'").fetchone()[0]
    while conn.execute("select count(*) from child_chunks").fetchone()[0] < target:
        filler_n += 1
        filler = get_or_create_user(conn, f"filler-{filler_n}")
        if conn.execute("select count(*) from documents where owner_id = %s", (filler,)).fetchone()[0]:
            continue
        print(f"adding copies for filler-{filler_n}", file=sys.stderr)
        with conn.transaction():
            params = {"owner": owner, "filler": filler}
            conn.execute(FILL_SQL, params)
            conn.execute(COPY_PARENTS, params)
            conn.execute(COPY_CHILDREN, params)
            conn.execute("select refresh_term_postings(id) from documents where owner_id = %s", (filler,))
            conn.execute("update documents d set children = (select count(*) from child_chunks c"
                         " where c.document_id = d.id) where owner_id = %s", (filler,))
    seconds = time.perf_counter() - started
    conn.execute("vacuum (analyze)")
    return conn.execute("select count(*) from child_chunks").fetchone()[0], seconds


def time_searches(db, settings, embedder, owner: int, docs: dict, questions: list[dict], modes: list[str],
                  repeats: int) -> dict[str, dict]:
    from storage.search import SearchParams, search

    timings: dict[str, list[float]] = {}
    sql: dict[str, list[float]] = {}
    for _warm in range(2):
        with db.connection() as conn:
            search(conn, owner_id=owner, query_text="warm up", query_embedding=embedder.embed_query("warm up"),
                   params=SearchParams())
    for _ in range(repeats):
        for scope in ("within_document", "all_filings"):
            for mode in modes:
                # the statement-heading leg on and off, question by question, so load hits both alike
                legs = {"": SearchParams.from_tunables(settings, k=5, mode=mode)}
                if mode != "dense":
                    legs[" (heading leg off)"] = SearchParams.from_tunables(settings, k=5, mode=mode,
                                                                            heading_weight=0.0)
                for n, q in enumerate(questions):
                    scope_ids = [docs[q["doc_name"] + ".pdf"]] if scope == "within_document" else None
                    # the first search of a question warms the caches for the second (its HNSW nodes,
                    # postings): the order alternates, so neither side always pays the cold reads
                    order = list(legs.items()) if n % 2 == 0 else list(legs.items())[::-1]
                    for label, params in order:
                        t0 = time.perf_counter()
                        vec = embedder.embed_query(q["question"]) if mode != "sparse" else None
                        t1 = time.perf_counter()
                        with db.connection() as conn:
                            search(conn, owner_id=owner, query_text=q["question"], query_embedding=vec,
                                   params=params, document_ids=scope_ids)
                        t2 = time.perf_counter()
                        timings.setdefault(f"{scope}/{mode}{label}", []).append((t2 - t0) * 1000)
                        # the database's part alone: what grows with the table
                        sql.setdefault(f"{scope}/{mode}{label}", []).append((t2 - t1) * 1000)
    return {k: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(nearest_rank(v, 0.95), 1), "n": len(v),
                "sql_p50_ms": round(statistics.median(sql[k]), 1), "sql_p95_ms": round(nearest_rank(sql[k], 0.95), 1)}
            for k, v in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--scales", default="65000,250000,1000000", help="child chunks in the table, ascending")
    parser.add_argument("--modes", choices=["hybrid", "all"], default="hybrid")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--name", default="search_scale")
    args = parser.parse_args()
    settings, db, embedder, owner, _docs = open_bench(args.home, args.user)
    modes = ["hybrid"] if args.modes == "hybrid" else ["hybrid", "dense", "sparse"]
    with db.connection() as conn:
        docs = dict(conn.execute("select name, id from documents where owner_id = %s and status = 'ready'",
                                 (owner,)).fetchall())
        own_children = conn.execute("select count(*) from child_chunks where owner_id = %s", (owner,)).fetchone()[0]
    questions = [q for q in load_jsonl(FINANCEBENCH / "questions.jsonl") if q["doc_name"] + ".pdf" in docs]
    runs: list[dict] = []
    for target in sorted(int(x) for x in args.scales.split(",")):
        with db.connection() as conn:
            total, fill_s = fill_to(conn, owner, target)
            sizes = table_sizes(conn)
        load_start = os.getloadavg()
        latency = time_searches(db, settings, embedder, owner, docs, questions, modes, args.repeats)
        runs.append({"target": target, "child_chunks": total, "fill_seconds": round(fill_s, 1), "sizes": sizes,
                     "latency": latency, "load_average": {"start": load_start, "end": os.getloadavg()}})
        write_result(args.name, {"embedding": embedder.identity, "filings": len(docs), "own_children": own_children,
                                 "questions": len(questions), "runs": runs}, render(runs, docs, questions, embedder))
        print(f"{total} chunks done", file=sys.stderr)
    print(render(runs, docs, questions, embedder))
    return 0


def render(runs: list[dict], docs: dict, questions: list[dict], embedder) -> str:
    keys = list(runs[0]["latency"])
    lines = ["| scope/mode: p50 / p95 ms, query embedding included (the database alone) | "
             + " | ".join(f"{r['child_chunks']:,} chunks" for r in runs) + " |", "|---|" + "---|" * len(runs)]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(
            (f"{r['latency'][k]['p50_ms']} / {r['latency'][k]['p95_ms']} "
             f"({r['latency'][k]['sql_p50_ms']} / {r['latency'][k]['sql_p95_ms']})") if k in r["latency"] else ""
            for r in runs) + " |")
    rows = [("child_chunks total MB", lambda r: r["sizes"]["child_chunks"]["total_mb"]),
            ("  of which HNSW index MB", lambda r: r["sizes"]["indexes"].get("child_chunks_embedding_idx")),
            ("  of which full-text GIN MB", lambda r: r["sizes"]["indexes"].get("child_chunks_tsv_idx")),
            ("term_stats (IDF + postings) MB", lambda r: r["sizes"].get("term_stats", {}).get("total_mb")),
            ("child_terms MB (dropped by sql/011)", lambda r: r["sizes"].get("child_terms", {}).get("total_mb", 0)),
            ("parent_chunks MB", lambda r: r["sizes"]["parent_chunks"]["total_mb"]),
            ("fill time s (this step)", lambda r: r["fill_seconds"])]
    lines += ["", "| size | " + " | ".join(f"{r['child_chunks']:,}" for r in runs) + " |", "|---|" + "---|" * len(runs)]
    lines += [f"| {label} | " + " | ".join(str(f(r)) for r in runs) + " |" for label, f in rows]
    loads = ", ".join(f"{r['load_average']['start'][0]:.1f}→{r['load_average']['end'][0]:.1f}" for r in runs)
    return "\n".join(lines) + (
        f"\n\nThe searching user owns {len(docs)} filings; {len(questions)} development questions on them, each "
        f"timed within its filing and across the user's filings, query embedding ({embedder.identity}) included, "
        f"after warm-up. Other users' jittered copies fill the table to each size. Load average during the "
        f"searches at each size: {loads} (2 cores shared with other sessions: above ~2 other processes were busy).\n")


if __name__ == "__main__":
    sys.exit(main())
