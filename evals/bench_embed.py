"""The embedding backends side by side: same texts, same run, interleaved rounds.

    python evals/bench_embed.py [--files 3] [--texts 300] [--rounds 3] [--backends torch,onnx,onnx-int8]

Takes the child chunks of the first --files FinanceBench filings exactly as ingestion builds them
(heading + text, parsed and chunked by the pipeline's own functions), keeps an evenly spaced
--texts of them, and embeds that list with every backend in turn, --rounds times, rotating the
order so that load from other processes falls on each backend alike. Reports chunks/s per backend
and its ratio to PyTorch within each round (the median ratio is the comparable number on a shared
machine), the cosine of every chunk's vector to PyTorch's, and query-embedding latency on the
development questions (interleaved question by question).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, write_result
from evals.scoring import nearest_rank, percentile


def chunk_texts(files: list[Path], counter, settings) -> list[str]:
    from ingestion.chunk import chunk_rows
    from ingestion.parse import parse_pdf
    from ingestion.pipeline import display_title

    texts: list[str] = []
    for path in files:
        parsed = parse_pdf(path.read_bytes())
        chunks = chunk_rows(parsed.rows, counter, title=display_title(path.name), child_tokens=settings.child_tokens,
                            overlap_tokens=settings.child_overlap_tokens, parent_tokens=settings.parent_tokens)
        texts += [f"{c.heading}\n{c.text}" for c in chunks.children]
    return texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdfs", type=Path, default=FINANCEBENCH / "pdfs")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--export-dir", type=Path, default=None, help="ONNX export root (default: the settings')")
    parser.add_argument("--name", default="embed_backends")
    args = parser.parse_args()

    import numpy as np

    from providers.embeddings import build_embedder
    from settings import Settings

    settings = Settings()  # the chunk sizes and, without --export-dir, the ONNX export root
    backends = args.backends.split(",")
    if "torch" not in backends:
        parser.error("the comparison is against torch: include it in --backends")
    load_s: dict[str, float] = {}
    embedders = {}
    for name in backends:
        t0 = time.perf_counter()
        embedders[name] = build_embedder(name, export_root=args.export_dir or settings.embedding_export_root)
        load_s[name] = round(time.perf_counter() - t0, 2)
    files = sorted(args.pdfs.glob("*.pdf"))[: args.files]
    every = chunk_texts(files, embedders["torch"].count_tokens, settings)
    step = max(1, len(every) // args.texts)
    texts = every[::step][: args.texts]
    tokens = embedders["torch"].count_tokens(texts)
    print(f"{len(texts)} chunks of {len(every)} from {len(files)} filings, {statistics.mean(tokens):.0f} word "
          f"pieces on average", file=sys.stderr)
    for e in embedders.values():
        e.embed_documents(texts[:8])  # warm-up

    load_start = os.getloadavg()
    rates: dict[str, list[float]] = {b: [] for b in backends}
    # CPU time of this process (all its threads) per chunk: the work itself, which other sessions'
    # load on the shared cores changes far less than the wall-clock rate.
    cpu_ms: dict[str, list[float]] = {b: [] for b in backends}
    ratios: dict[str, list[float]] = {b: [] for b in backends}
    vectors: dict[str, np.ndarray] = {}
    for rnd in range(args.rounds):
        order = backends[rnd % len(backends):] + backends[: rnd % len(backends)]
        round_rate = {}
        for name in order:
            t0, c0 = time.perf_counter(), time.process_time()
            vectors[name] = embedders[name].embed_documents(texts)
            round_rate[name] = len(texts) / (time.perf_counter() - t0)
            cpu_ms[name].append((time.process_time() - c0) * 1000 / len(texts))
            rates[name].append(round_rate[name])
        for name in backends:
            ratios[name].append(round_rate[name] / round_rate["torch"])
        print(f"round {rnd + 1}: " + ", ".join(f"{n} {r:.1f}/s" for n, r in round_rate.items()), file=sys.stderr)

    questions = [q["question"] for q in load_jsonl(FINANCEBENCH / "questions.jsonl")]
    query_ms: dict[str, list[float]] = {b: [] for b in backends}
    for e in embedders.values():
        e.embed_query("warm up")
    for q in questions:
        for name in backends:
            t0 = time.perf_counter()
            embedders[name].embed_query(q)
            query_ms[name].append((time.perf_counter() - t0) * 1000)
    load_end = os.getloadavg()

    summary: dict[str, dict] = {}
    for name in backends:
        cos = (vectors[name] * vectors["torch"]).sum(axis=1)
        summary[name] = {
            "identity": embedders[name].identity, "load_s": load_s[name],
            "chunks_per_s_median": round(statistics.median(rates[name]), 1),
            "chunks_per_s_rounds": [round(r, 1) for r in rates[name]],
            "ratio_to_torch_median": round(statistics.median(ratios[name]), 2),
            "ratio_to_torch_rounds": [round(r, 2) for r in ratios[name]],
            "cpu_ms_per_chunk_median": round(statistics.median(cpu_ms[name]), 1),
            "cpu_ms_per_chunk_rounds": [round(c, 1) for c in cpu_ms[name]],
            "cosine_to_torch": {"mean": round(float(cos.mean()), 4), "p5": percentile(cos.tolist(), 5, digits=4),
                                "min": round(float(cos.min()), 4)},
            "query_ms": {"p50": round(statistics.median(query_ms[name]), 1),
                         "p95": round(nearest_rank(query_ms[name], 0.95), 1)},
        }
    lines = ["| backend | chunks/s (median of rounds) | × torch (median of per-round ratios) "
             "| CPU ms per chunk | cosine to torch mean / p5 / min | query p50 ms | query p95 ms | load s |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        c = s["cosine_to_torch"]
        lines.append(f"| {name} | {s['chunks_per_s_median']} | {s['ratio_to_torch_median']} "
                     f"| {s['cpu_ms_per_chunk_median']} | {c['mean']} / {c['p5']} / {c['min']} "
                     f"| {s['query_ms']['p50']} | {s['query_ms']['p95']} "
                     f"| {s['load_s']} |")
    md = "\n".join(lines) + (
        f"\n\n{len(texts)} child chunks (every {step}th of {len(every)}) from {len(files)} filings, "
        f"{statistics.mean(tokens):.0f} word pieces on average; {args.rounds} rounds, backend order rotated each "
        f"round; {len(questions)} query embeddings per backend, interleaved. Load average {load_start[0]:.1f} at "
        f"start, {load_end[0]:.1f} at end: the 2 cores are shared with other sessions, so absolute rates vary "
        f"from run to run; the per-round ratios are the comparable numbers, and CPU ms per chunk (this process's "
        f"CPU time, all threads, median of rounds) is the work itself, which load changes least. Load s: building "
        f"the backend (an ONNX export, if one was needed, included).\n"
    )
    write_result(args.name, {"texts": len(texts), "filings": [f.name for f in files], "rounds": args.rounds,
                             "load_average": {"start": load_start, "end": load_end}, "backends": summary}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
