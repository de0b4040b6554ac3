"""Synthetic test sets from ingested documents (RAGAS), and a retrieval gate over them.

    # generate: parent chunks of N of the user's documents -> M questions with reference answers
    THOTQEN_HOME=/tmp/thb-base python evals/testset.py generate --user bench --documents 1 --size 3
    # gate: hybrid search within each question's source document; exit 1 when hit@5 < --floor
    THOTQEN_HOME=/tmp/thb-base python evals/testset.py gate evals/data/testset_bench.jsonl --floor 0.6

generate reads parent chunks (~1,500 tokens, a page range each) of --documents of --user's ready
documents, --chunks per document (spread evenly over the document, skipping short ones), as
LangChain Documents with metadata name/page. With `--generator ragas` (default) RAGAS 0.4's
TestsetGenerator builds a knowledge graph with one LLM transform (NERExtractor: the entities the
single-hop synthesizer needs) and asks SingleHopSpecificQuerySynthesizer for --size questions,
with one fixed persona (a financial analyst) instead of personas generated from document
summaries, and every entity mapped to that persona without an LLM call (AllThemesToPersona): RAGAS's
default transforms (headlines, summaries, themes, NER, embeddings, a custom node
filter) and persona generation are ~6 LLM calls per chunk, too many for a 1.5B model on 2 cores.
`--generator chain` asks the provider chain directly for one question and answer per chunk (a
structured reply), for when the RAGAS path cannot run. The judge is the provider chain (LLM_ORDER,
default here the embedded local model); embeddings are the packaged MiniLM.

Each generated row keeps its source: document id and name, parent chunk id, its page range; the
gate counts a hit when one of the top 5 results lies on a page of that range in that document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import eval_runtime, load_jsonl, write_result
from evals.scoring import first_rank, hit_at

if TYPE_CHECKING:
    from runtime import Runtime
    from settings import Settings

DATA = Path(__file__).parent / "data"
PERSONA = ("Financial analyst", "An equity analyst who reads annual reports and asks precise questions about "
           "reported figures, line items, segments, risks and accounting policies.")


# -- reading the documents ------------------------------------------------------------------------
def parent_chunks(db: Any, owner_id: int, *, documents: int, per_document: int,
                  min_chars: int = 1500, document_names: list[str] | None = None) -> list[dict]:
    """Parent chunks of the first `documents` ready documents (by name), `per_document` each, spread
    evenly through the document; chunks shorter than `min_chars` (covers, tables of contents) skipped."""
    from storage.documents import long_parent_chunks, ready_documents

    with db.connection() as conn:
        docs = [(doc_id, name) for name, doc_id in ready_documents(conn, owner_id=owner_id).items()]
        if document_names:
            docs = [d for d in docs if d[1] in document_names or d[1].removesuffix(".pdf") in document_names]
        out: list[dict] = []
        for doc_id, name in docs[:documents]:
            rows = long_parent_chunks(conn, owner_id=owner_id, document_id=doc_id, min_chars=min_chars)
            if not rows:
                continue
            step = max(1, len(rows) // (per_document + 1))
            picked = rows[step::step][:per_document] or rows[:per_document]
            out += [{"document_id": str(doc_id), "name": name, "parent_id": pid, "page": start, "page_end": end,
                     "text": text} for pid, start, end, text in picked]
    return out


def as_documents(chunks: list[dict]) -> list:
    from langchain_core.documents import Document

    return [Document(page_content=c["text"], metadata={k: v for k, v in c.items() if k != "text"}) for c in chunks]


# -- generating ---------------------------------------------------------------------------------
class AllThemesToPersona:
    """Stands in for RAGAS's theme-to-persona matching prompt: with one persona every extracted
    entity is its concept. The LLM version must echo the persona's exact name and entity strings
    verbatim, or the synthesizer finds no scenario; it also costs one LLM call per chunk."""

    name = "all_themes_to_persona"

    async def generate(self, data: Any, llm: Any = None, callbacks: Any = None, **kwargs: Any) -> Any:
        from ragas.testset.synthesizers.prompts import PersonaThemesMapping

        return PersonaThemesMapping(mapping={p.name: list(data.themes) for p in data.personas})


def generate_ragas(chunks: list[dict], size: int, chain: Any, embedder: Any, timeout_s: int) -> list[dict]:
    import warnings

    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator
    from ragas.testset.persona import Persona
    from ragas.testset.synthesizers.single_hop.specific import SingleHopSpecificQuerySynthesizer
    from ragas.testset.transforms.extractors.llm_based import NERExtractor

    from evals.ragas_adapter import offline_tokenizer, ragas_models

    llm, emb, _chat = ragas_models(chain, embedder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        generator = TestsetGenerator(llm=llm, embedding_model=emb,
                                     persona_list=[Persona(name=PERSONA[0], role_description=PERSONA[1])])
        testset = generator.generate_with_chunks(
            as_documents(chunks), testset_size=size, transforms=[NERExtractor(llm=llm, tokenizer=offline_tokenizer())],
            query_distribution=[(SingleHopSpecificQuerySynthesizer(
                llm=llm, theme_persona_matching_prompt=AllThemesToPersona()), 1.0)],  # type: ignore[arg-type]
            run_config=RunConfig(timeout=timeout_s, max_workers=1, max_retries=1))
    by_text = {c["text"].strip(): c for c in chunks}
    rows = []
    for sample in testset.samples:
        s = sample.eval_sample
        contexts = list(s.reference_contexts or [])
        source = next((by_text[c.strip()] for c in contexts if c.strip() in by_text), None)
        rows.append({"question": s.user_input, "reference": s.reference, "reference_contexts": contexts,
                     "synthesizer": sample.synthesizer_name, **_source(source)})
    return rows


QUESTION_PROMPT = (
    "Here is an excerpt of {name} (pages {page}-{page_end}):\n\n{text}\n\n"
    "Write one specific question an analyst could ask that this excerpt alone answers (name the "
    "company and the period; prefer a reported figure), and its answer from the excerpt."
)


def generate_chain(chunks: list[dict], size: int, chain: Any) -> list[dict]:
    """One structured question-and-answer per chunk from the provider chain (the fallback path)."""
    from pydantic import BaseModel, Field

    from providers.llm import AllLinksFailed

    class QA(BaseModel):
        question: str = Field(max_length=300)
        answer: str = Field(max_length=400)

    rows = []
    for chunk in chunks[:size]:
        try:
            result = chain.invoke([("human", QUESTION_PROMPT.format(**chunk))], structured=QA)
        except AllLinksFailed as exc:
            print(f"chunk {chunk['parent_id']}: {exc}", file=sys.stderr)
            continue
        qa: QA = result.parsed  # type: ignore[assignment]
        rows.append({"question": qa.question, "reference": qa.answer, "reference_contexts": [chunk["text"]],
                     "synthesizer": "chain_single_chunk", **_source(chunk)})
    return rows


def _source(chunk: dict | None) -> dict:
    keys = ("document_id", "name", "parent_id", "page", "page_end")
    return {f"source_{k}": (chunk or {}).get(k) for k in keys}


# -- the gate -----------------------------------------------------------------------------------
def gate_rows(rows: list[dict], db: Any, embedder: Any, settings: Settings, owner_id: int,
              k: int = 5) -> list[dict]:
    """Hybrid search within each row's source document, with the deployment's search settings; the
    rank of the first result on a source page."""
    from storage.search import SearchParams, search

    params = SearchParams.from_tunables(settings, k=k, mode="hybrid")
    out = []
    for row in rows:
        if not row.get("source_document_id"):
            out.append({"question": row["question"], "rank": None, "error": "no source"})
            continue
        pages = range(int(row["source_page"]), int(row["source_page_end"]) + 1)
        with db.connection() as conn:
            hits = search(conn, owner_id=owner_id, query_text=row["question"],
                          query_embedding=embedder.embed_query(row["question"]), params=params,
                          document_ids=[row["source_document_id"]])
        rank = first_rank(hits, lambda h, pages=pages: h.page in pages)
        out.append({"question": row["question"], "rank": rank, "source_pages": [pages.start, pages.stop - 1],
                    "top_pages": [h.page for h in hits]})
    return out


# -- commands -------------------------------------------------------------------------------------
def open_user(runtime: Runtime, user: str) -> int:
    """The owner id of `user`, who must exist (and have ingested)."""
    from storage.users import find_user

    with runtime.database.connection() as conn:
        owner_id = find_user(conn, user)
    if owner_id is None:
        raise SystemExit(f"no user {user!r} under THOTQEN_HOME={runtime.settings.home}; ingest first")
    return owner_id


def cmd_generate(args: argparse.Namespace, runtime: Runtime) -> int:
    owner_id = open_user(runtime, args.user)
    chunks = parent_chunks(runtime.database, owner_id, documents=args.documents, per_document=args.chunks or args.size,
                           document_names=args.document or None)
    if args.max_chars:  # a 1,500-token parent in RAGAS's few-shot prompt exceeded the local model's cut-off
        chunks = [{**c, "text": c["text"][: args.max_chars]} for c in chunks]
    if not chunks:
        print("no parent chunks to generate from", file=sys.stderr)
        return 2
    started = time.perf_counter()
    chain = runtime.chain()
    if args.generator == "ragas":
        rows = generate_ragas(chunks, args.size, chain, runtime.embedder, args.timeout)
    else:
        rows = generate_chain(chunks, args.size, chain)
    seconds = time.perf_counter() - started
    out = Path(args.out or DATA / f"testset_{args.user}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} questions from {len(chunks)} chunks in {seconds:.0f}s -> {out}", file=sys.stderr)
    if args.name:
        payload = {"generator": args.generator, "llm_order": os.environ.get("LLM_ORDER"), "user": args.user,
                   "documents": sorted({c["name"] for c in chunks}), "chunks": len(chunks), "size": args.size,
                   "generated": len(rows), "seconds": round(seconds, 1), "testset": str(out),
                   "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "rows": rows}
        md = [f"# Synthetic test set ({args.generator})", "",
              f"{len(rows)} of {args.size} questions from {len(chunks)} parent chunks of "
              f"{', '.join(payload['documents'])} in {seconds:.0f} s, LLM_ORDER={payload['llm_order']}.", "",
              "| question | source pages |", "|---|---|"]
        md += [f"| {r['question'][:160]} | {r['source_name']} p. {r['source_page']}-{r['source_page_end']} |"
               for r in rows]
        write_result(args.name, payload, "\n".join(md),
                     directory=Path(args.results_dir) if args.results_dir else None)
    return 0 if rows else 1


def cmd_gate(args: argparse.Namespace, runtime: Runtime) -> int:
    rows = load_jsonl(Path(args.testset))
    owner_id = open_user(runtime, args.user)
    ranked = gate_rows(rows, runtime.database, runtime.embedder, runtime.settings, owner_id, k=args.k)
    n = len(ranked)
    hit = hit_at([r["rank"] for r in ranked], args.k)  # each rank is within the k results searched
    passed = n > 0 and hit >= args.floor
    print(f"hit@{args.k} {hit:.3f} over {n} questions (floor {args.floor}): {'PASS' if passed else 'FAIL'}")
    if args.name:
        payload = {"testset": args.testset, "user": args.user, "k": args.k, "floor": args.floor,
                   f"hit@{args.k}": round(hit, 3), "n": n, "passed": passed,
                   "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "rows": ranked}
        md = [f"# Retrieval gate on `{args.testset}`", "",
              f"hit@{args.k} (a top-{args.k} hybrid result, within the source document, on a page of the "
              f"source chunk): **{hit:.3f}** over {n} questions; floor {args.floor}: "
              f"{'pass' if passed else 'FAIL'}.", "", "| question | rank | source pages | top pages |",
              "|---|---|---|---|"]
        md += [f"| {r['question'][:120]} | {r['rank']} | {r.get('source_pages')} | {r.get('top_pages')} |"
               for r in ranked]
        write_result(args.name, payload, "\n".join(md),
                     directory=Path(args.results_dir) if args.results_dir else None)
    return 0 if passed else 1


def main(argv: list[str] | None = None, runtime: Runtime | None = None) -> int:
    """The command line; `runtime`: the caller's (a test's), else this process's, built here and closed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate a synthetic test set from ingested documents")
    g.add_argument("--user", default="bench")
    g.add_argument("--documents", type=int, default=1, help="how many of the user's documents (by name)")
    g.add_argument("--document", action="append", help="a document name to use (repeatable)")
    g.add_argument("--chunks", type=int, default=0, help="parent chunks per document (default: --size)")
    g.add_argument("--size", type=int, default=3, help="questions to generate")
    g.add_argument("--generator", choices=["ragas", "chain"], default="ragas")
    g.add_argument("--max-chars", type=int, default=0, help="cut each chunk's text to this many characters")
    g.add_argument("--timeout", type=int, default=900, help="seconds per RAGAS job")
    g.add_argument("--out", default=None, help="JSONL to write (default evals/data/testset_<user>.jsonl)")
    g.add_argument("--name", default=None, help="also write evals/results/NAME.{json,md}")
    g.add_argument("--results-dir", default=None, help=argparse.SUPPRESS)
    g.set_defaults(func=cmd_generate)
    t = sub.add_parser("gate", help="retrieval hit@k over a generated test set; exit 1 below --floor")
    t.add_argument("testset")
    t.add_argument("--user", default="bench")
    t.add_argument("--floor", type=float, default=0.6)
    t.add_argument("--k", type=int, default=5)
    t.add_argument("--name", default=None, help="also write evals/results/NAME.{json,md}")
    t.add_argument("--results-dir", default=None, help=argparse.SUPPRESS)
    t.set_defaults(func=cmd_gate)
    args = parser.parse_args(argv)
    if runtime is not None:
        return args.func(args, runtime)
    if args.command == "generate":
        os.environ.setdefault("LLM_ORDER", "local")  # before the settings are read
    runtime = eval_runtime()
    try:
        return args.func(args, runtime)
    finally:
        runtime.close()


if __name__ == "__main__":
    sys.exit(main())
