"""OCR on the FinanceBench development filings: quality against the text layer, retrieval on scanned
evidence pages, and what OCR costs ingestion.

    python evals/bench_ocr.py cer [--limit N] [--dpi 150] [--keep-lines FILE]
    python evals/bench_ocr.py retrieval [--filings N | --only A,B] [--home DIR | --reuse HOME --user bench]
        [--lines FILE]
    python evals/bench_ocr.py speed [--pages 20] [--filing 3M_2018_10K]

cer: each evidence page is rasterised at --dpi into an image-only page (no text layer), recognised as
ingestion would (ingestion.parse.parse_pdf), and compared with the same page's text layer read the
same way: character error rate (Levenshtein distance / reference length, separators and whitespace
normalised), the share of the reference's figures found in the OCR text, and OCR pages/s.
retrieval: each filing is ingested twice, as it is and with its evidence pages rasterised, and
every question of those filings is searched within its filing (hybrid, the product's defaults):
hit@5 on the evidence page, text layer against OCR. Chunks whose text is unchanged reuse the vector
of the text-layer run (same model, same text, same vector) so only OCR'd pages cost embedding time.
With --reuse HOME the text-layer run is the documents --user already has in an ingested home
(evals/bench_ingest.py): the home is copied (never written), its vectors seed the reuse, and only
the rasterised variants are ingested. With --lines FILE (from `cer --keep-lines FILE`) a page whose
image is the one recognised in that run gets the lines recognised there (same image, same engine)
instead of being recognised again (a page whose image hash differs is recognised as usual).
speed: --pages pages of one filing ingested end to end with 0, 10, 50 and 100% of them rasterised.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.common import FINANCEBENCH, load_jsonl, pdf_pages, rasterise, write_result

FIGURE = re.compile(r"\d[\d,.]*\d|\d")


def normalise(text: str) -> str:
    return " ".join(text.replace(" | ", " ").split())


def page_key(page, dpi: int) -> str:  # a pymupdf.Page
    """What OCR sees of a page: the hash of its grey rendering at `dpi` (recognise_page's input)."""
    import hashlib

    import pymupdf

    zoom = dpi / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    return hashlib.sha256(pix.samples).hexdigest()


def reuse_lines(path: Path) -> dict[str, int]:
    """Make ingestion.ocr.recognise_page answer from a `cer --keep-lines` file when the page image is
    the one recognised there (same rendering, same engine: the same lines), and recognise otherwise.
    Returns the counters {"reused", "recognised"}; only for parsing in this process."""
    import json

    from ingestion import ocr

    known = {}
    for line in path.read_text().splitlines():
        item = json.loads(line)
        known[item["image"]] = [tuple(x) for x in item["lines"]]
    counts = {"reused": 0, "recognised": 0}
    recognise = ocr.recognise_page

    def cached(page, dpi: int):
        key = page_key(page, dpi)
        if key in known:
            counts["reused"] += 1
            return known[key]
        counts["recognised"] += 1
        return recognise(page, dpi)

    ocr.recognise_page = cached
    return counts


def evidence_pages() -> list[tuple[str, int]]:
    """(filing, 1-based page) of every evidence page of the development questions, sorted."""
    return sorted(set().union(*(scoring.evidence_pages(q) for q in load_jsonl(FINANCEBENCH / "questions.jsonl"))))


def run_cer(args: argparse.Namespace) -> int:
    import json

    from rapidfuzz.distance import Levenshtein

    from ingestion import ocr
    from ingestion.parse import parse_pdf

    ocr.engine()  # loaded once, outside the timings
    kept: list = []
    if args.keep_lines:  # the recognised lines, for studying row grouping and for `retrieval --lines`
        recognise = ocr.recognise_page
        ocr.recognise_page = lambda page, dpi: kept.append((page_key(page, dpi), recognise(page, dpi))) or kept[-1][1]
    rows = []
    pages = evidence_pages()
    if args.limit:
        step = max(1, len(pages) // args.limit)
        pages = pages[::step][: args.limit]  # spread over the filings, not the first few
    for doc, page in pages:
        data = pdf_pages((FINANCEBENCH / "pdfs" / f"{doc}.pdf").read_bytes(), [page])
        reference = normalise(parse_pdf(data).units[0].text)
        scan = rasterise(data, dpi=args.dpi)
        started, cpu = time.perf_counter(), time.process_time()
        recognised = parse_pdf(scan)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        hypothesis = normalise(recognised.units[0].text)
        distance = Levenshtein.distance(reference, hypothesis)
        figures = FIGURE.findall(reference)
        found = set(FIGURE.findall(hypothesis))
        rows.append({"filing": doc, "page": page, "ref_chars": len(reference), "distance": distance,
                     "cer": round(distance / max(len(reference), 1), 4), "figures": len(figures),
                     "figures_found": sum(1 for f in figures if f in found), "seconds": round(seconds, 2),
                     "cpu_seconds": round(cpu, 2),
                     "ocr": recognised.units[0].ocr})
        print(f"{doc} p{page}: CER {rows[-1]['cer']:.3f}, {seconds:.1f} s", file=sys.stderr)
        if args.keep_lines:
            with args.keep_lines.open("a") as out:
                key, lines = kept.pop()
                out.write(json.dumps({"filing": doc, "page": page, "image": key, "lines": lines}) + "\n")
    total_ref = sum(r["ref_chars"] for r in rows)
    total_dist = sum(r["distance"] for r in rows)
    cers = sorted(r["cer"] for r in rows)
    summary = {
        "pages": len(rows), "filings": len({r["filing"] for r in rows}), "dpi": args.dpi,
        "cer_pooled": round(total_dist / total_ref, 4), "cer_median": round(statistics.median(cers), 4),
        "cer_p90": round(cers[max(0, -(-9 * len(cers) // 10) - 1)], 4),
        "figures_found": round(sum(r["figures_found"] for r in rows) / max(sum(r["figures"] for r in rows), 1), 4),
        "seconds_per_page_median": round(statistics.median(r["seconds"] for r in rows), 2),
        "pages_per_s": round(len(rows) / sum(r["seconds"] for r in rows), 3),
        "cpu_seconds_per_page_median": round(statistics.median(r["cpu_seconds"] for r in rows), 2),
        "load_average": list(os.getloadavg()),
    }
    md = (
        "| pages | filings | dpi | CER (pooled) | CER median | CER p90 | figures found | s/page (median) | pages/s "
        "| CPU s/page (median) |\n|---|---|---|---|---|---|---|---|---|---|\n"
        f"| {summary['pages']} | {summary['filings']} | {args.dpi} | {summary['cer_pooled']:.2%} | "
        f"{summary['cer_median']:.2%} | {summary['cer_p90']:.2%} | {summary['figures_found']:.1%} | "
        f"{summary['seconds_per_page_median']} | {summary['pages_per_s']} | "
        f"{summary['cpu_seconds_per_page_median']} |\n\n"
        "Each evidence page of the development questions rasterised into an image-only page, recognised by "
        "`parse_pdf` (render, RapidOCR PP-OCRv6 small, row grouping) and compared with the text layer read the "
        "same way. CER = edit distance / reference characters after collapsing whitespace and cell separators; "
        "row grouping of the two can differ on multi-column pages, which counts as errors. Figures found: share "
        "of the reference's numbers present in the OCR text. Time: render + OCR of one page, model loaded, "
        f"on a 2-core machine shared with other jobs (load average {summary['load_average'][1]:.1f} over the last "
        "5 minutes at the end): wall seconds depend on that load, CPU seconds (all threads) much less; on two "
        "idle cores a page takes about half its CPU seconds.\n\n"
        "| filing | page | CER | figures found | s | CPU s |\n|---|---|---|---|---|---|\n"
        + "".join(f"| {r['filing']} | {r['page']} | {r['cer']:.2%} | {r['figures_found']}/{r['figures']} | "
                  f"{r['seconds']} | {r['cpu_seconds']} |\n" for r in rows)
    )
    write_result(args.name or "ocr", {**summary, "rows": rows}, md)
    print(md)
    return 0


class CachingEmbedder:
    """The real embedder, with the vectors of texts it has embedded before reused (same model, same text)."""

    def __init__(self, embedder) -> None:
        self.inner = embedder
        self.identity, self.dimension = embedder.identity, embedder.dimension
        self.cache: dict[str, object] = {}
        self.embedded = 0

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def embed_query(self, text: str):
        return self.inner.embed_query(text)

    def embed_documents(self, texts, progress=None):
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, vec in zip(missing, self.inner.embed_documents(missing), strict=True):
                self.cache[text] = vec
            self.embedded += len(missing)
        if progress is not None:
            progress(len(texts), len(texts))
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)


def copy_home(source: Path) -> Path:
    """A copy of an ingested home in a fresh folder, so a run never writes into the original. Its
    database must be stopped: a running Postgres's files are not a consistent copy."""
    pid_file = source / "pg" / "postmaster.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().split()[0]), 0)
        except (ProcessLookupError, ValueError, IndexError):
            pass  # a stale pid file: the server is not running
        else:
            raise SystemExit(f"the database in {source} is running; wait until the process using it ends")
    target = Path(tempfile.mkdtemp(prefix="thq-ocr-", dir="/tmp"))
    for entry in source.iterdir():
        if entry.name != "run":  # the embedded server's bookkeeping of who uses it: not copied
            # cp -a keeps owners too: the database files belong to the user Postgres runs as
            subprocess.run(["cp", "-a", str(entry), str(target / entry.name)], check=True)
    (target / "pg" / "postmaster.pid").unlink(missing_ok=True)
    return target


def seed_cache(conn, embedder: CachingEmbedder, owner: int, document_id) -> int:
    """Put a stored document's vectors in the cache under the text they were made from."""
    import numpy as np

    from ingestion.pipeline import embedding_text

    rows = conn.execute("select heading, text, embedding from child_chunks where owner_id = %s and document_id = %s",
                        (owner, document_id)).fetchall()
    for heading, text, vec in rows:  # float4 in the database: the embedder's float32 vector exactly
        embedder.cache.setdefault(embedding_text(heading, text), np.asarray(vec.to_numpy(), dtype=np.float32))
    return len(rows)


def run_retrieval(args: argparse.Namespace) -> int:
    if args.reuse and args.home:
        raise SystemExit("--reuse copies an ingested home; --home names a fresh one: give one of them")
    home = copy_home(args.reuse) if args.reuse else args.home or Path(tempfile.mkdtemp(prefix="thq-ocr-", dir="/tmp"))
    print(f"home: {home}", file=sys.stderr)
    os.environ.pop("DATABASE_URL", None)
    from evals.common import eval_runtime
    from evals.retrieval import evidence_pages as question_pages
    from evals.retrieval import question_ranks, summarise
    from ingestion.parse import parse_pdf
    from ingestion.pipeline import limits, run_job, submit_document
    from ingestion.prefetch import Prepared
    from storage.documents import ready_documents
    from storage.search import SearchParams
    from storage.users import find_user, get_or_create_user

    counts = reuse_lines(args.lines) if args.lines else None
    runtime = eval_runtime(home)
    settings, db = runtime.settings, runtime.database
    embedder = CachingEmbedder(runtime.embedder)
    questions = load_jsonl(FINANCEBENCH / "questions.jsonl")
    filings = sorted({q["doc_name"] for q in questions})
    if args.only:
        filings = [f for f in filings if f in args.only.split(",")]
    elif args.filings:
        filings = filings[: args.filings]
    questions = [q for q in questions if q["doc_name"] in filings]
    owners = {}
    docs: dict[str, dict] = {"text": {}, "ocr": {}}
    timings: dict[str, float] = {"text": 0.0, "ocr": 0.0}
    ocr_pages = 0
    with db.connection() as conn:
        owners = {kind: get_or_create_user(conn, f"ocr-bench-{kind}") for kind in docs}
        if args.reuse:  # the text-layer run is the documents the home already holds
            owners["text"] = find_user(conn, args.user)
            held = ready_documents(conn, owner_id=owners["text"]) if owners["text"] is not None else {}
            missing = [f for f in filings if f"{f}.pdf" not in held]
            if missing:
                raise SystemExit(f"{args.reuse} has no ready {', '.join(missing)} for user {args.user!r}")
            docs["text"] = {f"{f}.pdf": held[f"{f}.pdf"] for f in filings}
    for filing in filings:
        data = (FINANCEBENCH / "pdfs" / f"{filing}.pdf").read_bytes()
        scanned = {p for q in questions if q["doc_name"] == filing for p in question_pages(q)}
        variants = [("text", data), ("ocr", rasterise(data, scanned, dpi=args.dpi))]
        if args.reuse:
            with db.connection() as conn:
                seed_cache(conn, embedder, owners["text"], docs["text"][f"{filing}.pdf"])
            variants = variants[1:]
        for kind, body in variants:
            started = time.perf_counter()
            sub = submit_document(db, settings, owner_id=owners[kind], name=f"{filing}.pdf", data=body)
            if sub.job_id:
                prepared = None
                if counts is not None and kind == "ocr":  # parsed here, where recognised lines are reused
                    prepared = Prepared(sub.content_hash, parse_pdf(body, ocr=limits(settings).ocr))
                outcome = run_job(db, settings, embedder, sub.job_id, prepared=prepared)
                if outcome.status != "ready":
                    raise SystemExit(f"{filing} ({kind}): {outcome.error}")
            timings[kind] += time.perf_counter() - started
            docs[kind][f"{filing}.pdf"] = sub.document_id
        ocr_pages += len(scanned)
        print(f"{filing}: {len(scanned)} evidence pages rasterised; {embedder.embedded} chunks embedded so far",
              file=sys.stderr)
    with db.connection() as conn:
        marked = conn.execute("select count(distinct (document_id, page)) from child_chunks"
                              " where owner_id = %s and ocr", (owners["ocr"],)).fetchone()[0]
    params = SearchParams.from_tunables(settings, k=10, mode="hybrid")
    results: dict = {"filings": len(filings), "questions": len(questions), "rasterised_pages": ocr_pages,
                     "pages_marked_ocr": marked, "dpi": args.dpi, "chunks_embedded": embedder.embedded,
                     "ingest_seconds": {k: round(v, 1) for k, v in timings.items()},
                     "text_run": f"user {args.user!r} of a copy of {args.reuse}" if args.reuse else "ingested here",
                     "ocr_pages_reused_from": str(args.lines) if args.lines else None, "ocr_page_counts": counts,
                     "runs": {}, "per_question": []}
    ranks = {}
    for kind in docs:
        out = question_ranks(db, embedder.inner, owners[kind], docs[kind], questions, params, "within_document")
        ranks[kind] = [rank for rank, _pages, _s in out]
        results["runs"][kind] = summarise(ranks[kind])
    for q, a, b in zip(questions, ranks["text"], ranks["ocr"], strict=True):
        results["per_question"].append({"id": q["financebench_id"], "filing": q["doc_name"], "text_rank": a,
                                        "ocr_rank": b})
    t, o = results["runs"]["text"], results["runs"]["ocr"]
    md = (
        "| run | hit@1 | hit@3 | hit@5 | hit@10 | MRR |\n|---|---|---|---|---|---|\n"
        + "".join(f"| {kind} | {m['hit@1']} | {m['hit@3']} | {m['hit@5']} | {m['hit@10']} | {m['mrr']} |\n"
                  for kind, m in results["runs"].items())
        + f"\nhit@5 difference (OCR - text layer): {o['hit@5'] - t['hit@5']:+.3f} on {len(questions)} questions of "
        f"{len(filings)} filings; {ocr_pages} evidence pages rasterised at {args.dpi} dpi, {marked} pages "
        "stored as OCR'd. Within-filing hybrid search with the product's defaults, k=10.\n"
        + (f"\nText-layer run: the filings user `{args.user}` holds in a copy of `{args.reuse}` (ingested "
           "earlier by evals/bench_ingest.py); OCR run: those filings ingested again with their evidence pages "
           f"rasterised, {embedder.embedded} chunks embedded (the rest reuse the stored vectors of identical "
           f"texts), {timings['ocr']:.0f} s.\n" if args.reuse else "")
        + (f"\nRecognised lines: {counts['reused']} pages answered from `{args.lines}` (a `cer --keep-lines` run: "
           f"the same page image, hashed, read by the same engine), {counts['recognised']} recognised here; "
           "the OCR variants were parsed in this process (not the sandboxed child) for that.\n" if counts else "")
    )
    write_result(args.name or "ocr_retrieval", results, md)
    print(md)
    return 0


def run_speed(args: argparse.Namespace) -> int:
    home = Path(tempfile.mkdtemp(prefix="thq-ocrspeed-", dir="/tmp"))
    os.environ.pop("DATABASE_URL", None)
    from evals.common import eval_runtime
    from ingestion.pipeline import run_job, submit_document
    from storage.users import get_or_create_user

    runtime = eval_runtime(home)
    settings, db, embedder = runtime.settings, runtime.database, runtime.embedder
    embedder.embed_documents(["warm up"] * 8)
    base = pdf_pages((FINANCEBENCH / "pdfs" / f"{args.filing}.pdf").read_bytes(),
                     list(range(args.first, args.first + args.pages)))
    rows = []
    for share in (0.0, 0.1, 0.5, 1.0):
        count = round(share * args.pages)
        chosen = {round(i * args.pages / count) + 1 for i in range(count)} if count else set()
        data = rasterise(base, chosen, dpi=args.dpi) if chosen else base
        with db.connection() as conn:
            owner = get_or_create_user(conn, f"speed-{int(share * 100)}")
        started = time.perf_counter()
        sub = submit_document(db, settings, owner_id=owner, name=f"{args.filing}-{int(share * 100)}.pdf", data=data)
        outcome = run_job(db, settings, embedder, sub.job_id)
        seconds = time.perf_counter() - started
        stages = outcome.stage_seconds
        rows.append({"ocr_share": share, "ocr_pages": len(chosen), "pages": outcome.pages, "status": outcome.status,
                     "seconds": round(seconds, 1), "pages_per_s": round(outcome.pages / seconds, 3),
                     "chunks": outcome.children, "stages": stages,
                     "ocr_pages_per_s": round(len(chosen) / stages["ocr"], 3) if stages.get("ocr") else None})
        print(rows[-1], file=sys.stderr)
    md = (
        "| pages needing OCR | pages | seconds | pages/s | OCR stage s | OCR pages/s | embedding s | chunks |\n"
        "|---|---|---|---|---|---|---|---|\n"
        + "".join(f"| {r['ocr_pages']} ({r['ocr_share']:.0%}) | {r['pages']} | {r['seconds']} | {r['pages_per_s']} | "
                  f"{r['stages'].get('ocr', 0)} | {r['ocr_pages_per_s'] or '-'} | {r['stages'].get('embedding')} | "
                  f"{r['chunks']} |\n" for r in rows)
        + f"\n{args.pages} pages of {args.filing} (from page {args.first}), ingested end to end (`submit_document` "
        f"+ `run_job`: parsing in the sandboxed child, OCR, chunking, embedding, storing) with a share of them "
        f"rasterised at {args.dpi} dpi; the OCR stage includes loading the OCR models once per document.\n"
    )
    write_result(args.name or "ocr_ingest", {"filing": args.filing, "dpi": args.dpi, "rows": rows}, md)
    print(md)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["cer", "retrieval", "speed"])
    parser.add_argument("--keep-lines", type=Path, default=None, help="cer: append each page's recognised lines "
                        "(JSON lines) to this file")
    parser.add_argument("--limit", type=int, default=0, help="cer: at most N evidence pages, spread over filings")
    parser.add_argument("--filings", type=int, default=0, help="retrieval: only the first N filings")
    parser.add_argument("--only", default="", help="retrieval: these filings (comma-separated names)")
    parser.add_argument("--home", type=Path, default=None, help="retrieval: data directory (default: fresh)")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="retrieval: an ingested home to copy; its --user's documents are the text-layer run")
    parser.add_argument("--lines", type=Path, default=None,
                        help="retrieval: reuse recognised lines a `cer --keep-lines` run kept for the same page images")
    parser.add_argument("--user", default="bench", help="retrieval: the user of --reuse holding the filings")
    parser.add_argument("--pages", type=int, default=20, help="speed: pages ingested per variant")
    parser.add_argument("--first", type=int, default=40, help="speed: first page taken from the filing")
    parser.add_argument("--filing", default="3M_2018_10K", help="speed: the filing the pages come from")
    parser.add_argument("--dpi", type=int, default=150)
    parser.add_argument("--name", default=None, help="result file name under evals/results/")
    args = parser.parse_args()
    return {"cer": run_cer, "retrieval": run_retrieval, "speed": run_speed}[args.part](args)


if __name__ == "__main__":
    sys.exit(main())
