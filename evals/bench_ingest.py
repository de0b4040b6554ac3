"""Ingestion throughput on the FinanceBench filings, next to the embedding model's own ceiling.

    python evals/bench_ingest.py [--pdfs DIR] [--limit N]

Ingests every PDF into a fresh data directory (embedded Postgres), as `thotqen ingest` does.
After each file it re-embeds a random share of that file's stored chunks with the bare model, so
the model's own throughput (the ceiling) is measured in the same run, on the same texts and under
the same load as ingestion; the ratio shows how far parsing, chunking and storing pull below it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, write_result  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdfs", type=Path, default=FINANCEBENCH / "pdfs")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--home", type=Path, default=None, help="data directory (default: a fresh temp dir)")
    parser.add_argument("--sample", type=float, default=0.25, help="share of each file's chunks re-embedded")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="thq-bench-", dir="/tmp"))
    os.environ["THOTQEN_HOME"] = str(home)
    os.environ.pop("DATABASE_URL", None)

    from ingestion.pipeline import run_job, submit_pdf
    from providers.embeddings import get_embedder
    from settings import get_settings
    from storage.db import open_database
    from storage.documents import chunk_texts
    from storage.users import get_or_create_user

    settings = get_settings()
    db = open_database(settings)
    with db.connection() as conn:
        owner = get_or_create_user(conn, "bench")
    embedder = get_embedder(settings.embedding_model_path, settings.embedding_batch_size)
    embedder.embed_documents(["warm up"] * 8)

    files = sorted(args.pdfs.glob("*.pdf"))[: args.limit or None]
    pages = children = parents = 0
    stage_totals: dict[str, float] = {}
    rng = random.Random(0)
    sampled = 0
    sampled_seconds = 0.0
    ingest_seconds = 0.0
    for n, path in enumerate(files, 1):
        t0 = time.perf_counter()
        sub = submit_pdf(db, settings, owner_id=owner, name=path.name, data=path.read_bytes())
        out = run_job(db, settings, embedder, sub.job_id)
        ingest_seconds += time.perf_counter() - t0
        if out.status != "ready":
            print(f"FAILED {path.name}: {out.error}", file=sys.stderr)
            return 1
        pages += out.pages
        children += out.children
        parents += out.parents
        for stage, secs in out.stage_seconds.items():
            stage_totals[stage] = stage_totals.get(stage, 0.0) + secs
        # The ceiling: the bare model on this file's own chunk texts, same batching, same moment.
        with db.connection() as conn:
            texts = chunk_texts(conn, owner_id=owner, document_id=sub.document_id)
        sample = rng.sample(texts, max(1, int(len(texts) * args.sample)))
        t0 = time.perf_counter()
        embedder.embed_documents(sample)
        sampled_seconds += time.perf_counter() - t0
        sampled += len(sample)
        print(f"[{n}/{len(files)}] {path.name}: {out.pages} pages, {out.children} chunks, {out.seconds:.1f}s",
              file=sys.stderr)
    total = ingest_seconds
    model_rate = sampled / sampled_seconds

    ingest_rate = children / total
    result = {
        "files": len(files), "pages": pages, "parents": parents, "children": children,
        "seconds": round(total, 1), "pages_per_s": round(pages / total, 2),
        "chunks_per_s": round(ingest_rate, 2), "model_chunks_per_s": round(model_rate, 2),
        "share_of_ceiling": round(ingest_rate / model_rate, 3),
        "stage_seconds": {k: round(v, 1) for k, v in stage_totals.items()},
        "embedding_batch_size": settings.embedding_batch_size,
    }
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in result["stage_seconds"].items())
    md = (
        "| files | pages | chunks | seconds | pages/s | chunks/s | model alone chunks/s | share of ceiling |\n"
        "|---|---|---|---|---|---|---|---|\n"
        f"| {len(files)} | {pages} | {children} | {total:.0f} | {result['pages_per_s']} | {result['chunks_per_s']} "
        f"| {result['model_chunks_per_s']} | {result['share_of_ceiling']:.0%} |\n\nTime by stage: {stages}.\n"
    )
    write_result("ingest", result, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
