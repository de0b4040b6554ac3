"""Search latency with 50,000+ child chunks stored, query embedding included.

    python evals/bench_search.py --home DIR [--user bench] [--min-chunks 50000]

Needs the filings ingested under --home for --user (evals/bench_ingest.py). If the table holds
fewer than --min-chunks children, it adds copies of that user's chunks under other users (their
vectors jittered, so the HNSW graph is not full of exact duplicates) until it does: the searching
user's scope stays the same while the index the planner walks is as large as asked.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, open_bench, write_result  # noqa: E402

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


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--min-chunks", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    settings, db, embedder, owner, _docs = open_bench(args.home, args.user)

    from storage.search import SearchParams, search
    from storage.users import get_or_create_user

    with db.connection() as conn:
        filler_n = 0
        while conn.execute("select count(*) from child_chunks").fetchone()[0] < args.min_chunks:
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
        conn.execute("analyze")
        total = conn.execute("select count(*) from child_chunks").fetchone()[0]
        docs = dict(conn.execute("select name, id from documents where owner_id = %s", (owner,)).fetchall())

    questions = load_jsonl(FINANCEBENCH / "questions.jsonl")
    load_start = os.getloadavg()
    timings: dict[str, list[float]] = {}
    for _warm in range(2):
        with db.connection() as conn:
            search(conn, owner_id=owner, query_text="warm up", query_embedding=embedder.embed_query("warm up"),
                   params=SearchParams())
    for _ in range(args.repeats):
        for scope in ("within_document", "all_filings"):
            for mode in ("hybrid", "dense", "sparse"):
                # the statement-heading leg on and off, question by question, so load hits both alike
                legs = {"": SearchParams.from_tunables(settings, k=5, mode=mode)}
                if mode != "dense":
                    legs[" (heading leg off)"] = SearchParams.from_tunables(settings, k=5, mode=mode,
                                                                            heading_weight=0.0)
                for q in questions:
                    scope_ids = [docs[q["doc_name"] + ".pdf"]] if scope == "within_document" else None
                    for label, params in legs.items():
                        t0 = time.perf_counter()
                        vec = embedder.embed_query(q["question"]) if mode != "sparse" else None
                        with db.connection() as conn:
                            search(conn, owner_id=owner, query_text=q["question"], query_embedding=vec,
                                   params=params, document_ids=scope_ids)
                        timings.setdefault(f"{scope}/{mode}{label}", []).append((time.perf_counter() - t0) * 1000)
    load_end = os.getloadavg()
    summary = {k: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(percentile(v, 0.95), 1),
                   "n": len(v)} for k, v in timings.items()}
    lines = ["| scope/mode | p50 ms | p95 ms | searches |", "|---|---|---|---|"]
    lines += [f"| {k} | {s['p50_ms']} | {s['p95_ms']} | {s['n']} |" for k, s in summary.items()]
    md = "\n".join(lines) + (
        f"\n\n{total} child chunks in the table; the searching user owns "
        f"{len(docs)} filings. Query embedding included; after warm-up. Load average "
        f"{load_start[0]:.1f} at start, {load_end[0]:.1f} at end (2 cores: above ~1 another process was busy).\n"
    )
    write_result("search_latency", {"child_chunks": total, "latency": summary,
                                    "load_average": {"start": load_start, "end": load_end}}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
