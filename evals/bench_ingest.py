"""Ingestion throughput on the FinanceBench filings, next to the embedding backends' own ceilings.

    python evals/bench_ingest.py [--pdfs DIR] [--limit N] [--backend onnx-int8] [--ceilings torch,onnx-int8]

Ingests every PDF into a fresh data directory (embedded Postgres), as `thotqen ingest` does, with
the --backend embedder (default: the EMBEDDING_BACKEND setting). After each file it re-embeds a
random share of that file's stored chunks with the bare model of every --ceilings backend, in
turn (order rotated per file), so each backend's own throughput is measured in the same run, on
the same texts and under the same load as ingestion. The ceiling is the fastest of them; the
share of it shows how far parsing, chunking and storing (and a slower backend) pull below it.
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

from evals.common import FINANCEBENCH, write_result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdfs", type=Path, default=FINANCEBENCH / "pdfs")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--home", type=Path, default=None, help="data directory (default: a fresh temp dir)")
    parser.add_argument("--sample", type=float, default=0.25, help="share of each file's chunks re-embedded")
    parser.add_argument("--backend", default=None, help="embedding backend that ingests (default: the setting)")
    parser.add_argument("--ceilings", default="torch,onnx-int8", help="backends timed on the sampled chunks")
    parser.add_argument("--name", default="ingest", help="result file name under evals/results/")
    parser.add_argument("--no-prefetch", action="store_true",
                        help="parse each file only when its job starts (as before ingestion.prefetch)")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="thq-bench-", dir="/tmp"))
    os.environ.pop("DATABASE_URL", None)
    if args.backend:
        os.environ["EMBEDDING_BACKEND"] = args.backend  # the runtime's embedder ingests

    from evals.common import eval_runtime
    from ingestion.pipeline import make_prefetcher, run_job, submit_document
    from providers.embeddings import build_embedder
    from storage.documents import chunk_texts
    from storage.users import get_or_create_user

    runtime = eval_runtime(home)
    settings, db, embedder = runtime.settings, runtime.database, runtime.embedder
    with db.connection() as conn:
        owner = get_or_create_user(conn, "bench")
    # the backends compared on purpose, one model each (the ingesting backend's is the runtime's)
    ceilings = {name: embedder if name == embedder.backend else build_embedder(
        name, settings.embedding.model_path, settings.embedding.batch_size, None, settings.embedding_export_root)
        for name in args.ceilings.split(",")}
    for e in {embedder, *ceilings.values()}:
        e.embed_documents(["warm up"] * 8)

    files = sorted(args.pdfs.glob("*.pdf"))[: args.limit or None]
    pages = children = parents = 0
    stage_totals: dict[str, float] = {}
    rng = random.Random(0)
    sampled = 0
    sampled_seconds = dict.fromkeys(ceilings, 0.0)
    load_start = os.getloadavg()
    ingest_seconds = 0.0
    prefetcher = None if args.no_prefetch else make_prefetcher(settings)
    for n, path in enumerate(files, 1):
        t0 = time.perf_counter()
        sub = submit_document(db, settings, owner_id=owner, name=path.name, data=path.read_bytes())
        prepared = prefetcher.take(path, sub.content_hash) if prefetcher else None
        if prefetcher and n < len(files):  # the next file parses while this one embeds
            prefetcher.start(files[n])
        out = run_job(db, settings, embedder, sub.job_id, prepared=prepared)
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
        names = list(ceilings)
        for name in names[n % len(names):] + names[: n % len(names)]:
            t0 = time.perf_counter()
            ceilings[name].embed_documents(sample)
            sampled_seconds[name] += time.perf_counter() - t0
        sampled += len(sample)
        print(f"[{n}/{len(files)}] {path.name}: {out.pages} pages, {out.children} chunks, {out.seconds:.1f}s",
              file=sys.stderr)
    total = ingest_seconds
    load_end = os.getloadavg()
    model_rates = {name: sampled / secs for name, secs in sampled_seconds.items()}
    ceiling_backend = max(model_rates, key=model_rates.get)
    ingest_rate = children / total
    result = {
        "backend": embedder.backend, "identity": embedder.identity,
        "files": len(files), "pages": pages, "parents": parents, "children": children,
        "seconds": round(total, 1), "pages_per_s": round(pages / total, 2),
        "chunks_per_s": round(ingest_rate, 2),
        "model_chunks_per_s": {name: round(rate, 2) for name, rate in model_rates.items()},
        "ceiling_backend": ceiling_backend,
        "share_of_ceiling": round(ingest_rate / model_rates[ceiling_backend], 3),
        "stage_seconds": {k: round(v, 1) for k, v in stage_totals.items()},
        "sampled_chunks": sampled, "load_average": {"start": load_start, "end": load_end},
        "embedding_batch_size": settings.embedding.batch_size, "prefetch": not args.no_prefetch,
    }
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in result["stage_seconds"].items())
    alone = " | ".join(str(result["model_chunks_per_s"][name]) for name in ceilings)
    md = (
        "| backend | files | pages | chunks | seconds | pages/s | chunks/s | "
        + " | ".join(f"{name} alone chunks/s" for name in ceilings)
        + " | share of ceiling |\n|---|---|---|---|---|---|---|" + "---|" * len(ceilings) + "---|\n"
        f"| {embedder.backend} | {len(files)} | {pages} | {children} | {total:.0f} | {result['pages_per_s']} "
        f"| {result['chunks_per_s']} | {alone} | {result['share_of_ceiling']:.0%} |\n\n"
        f"Time by stage: {stages} (parsing and chunking of all but the first file happen during the previous "
        f"file's embedding when prefetching: {'on' if prefetcher else 'off'}). The ceiling is the fastest backend "
        f"alone ({ceiling_backend}), timed on "
        f"{sampled} of the stored chunks ({args.sample:.0%} of each file) right after each file. Load average "
        f"{load_start[0]:.1f} at start, {load_end[0]:.1f} at end (2 cores shared with other sessions: absolute "
        f"rates vary between runs; the ratios within this run are the comparable numbers).\n"
    )
    write_result(args.name, result, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
