"""Searching all filings, with and without narrowing to the filings a question names.

    python evals/scope_from_question.py --home DIR [--user bench] [--company-only]

For the development questions (FinanceBench) and the rule-written ones (evals/data/), searched
across every ingested filing with `scope_from_question` off and on (storage/document_filter.py
`named_documents`): hit@1 / hit@5 (an evidence page of the question's filing in the top k) and
"named filing first" (the top hit is from the question's own filing). The rule has nothing fitted
to these questions (legal forms, first two words, initials, years), so every company's row is a
held-back figure: the table lists them one by one, as company-grouped cross-validation would.
--company-only: the ablation without the fiscal-year step (only the companies named narrow).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import open_bench, write_result
from evals.cv import Question, financebench_questions, synthetic_questions
from evals.scoring import filing_rank, first_hit_rank, hit_at


def hit(ranks: list[int | None], k: int) -> float:
    return hit_at(ranks, k, digits=3)


def measure(db, embedder, settings, owner: int, docs: dict, questions: list[Question]) -> list[dict]:
    from storage.document_filter import named_documents
    from storage.search import SearchParams, search

    rows = []
    for q in questions:
        vector = embedder.embed_query(q.text)
        row = {"id": q.id, "company": q.company}
        with db.connection() as conn:
            narrowed = named_documents(conn, owner_id=owner, question=q.text)
            row["narrowed"] = narrowed is not None
            row["own_filing_kept"] = narrowed is None or docs[f"{q.doc_name}.pdf"] in narrowed
            for on in (False, True):
                params = SearchParams.from_tunables(settings, k=10, mode="hybrid", scope_from_question=on)
                hits = search(conn, owner_id=owner, query_text=q.text, query_embedding=vector, params=params)
                key = "on" if on else "off"
                row[f"rank_{key}"] = first_hit_rank(hits, q.doc_name, set(q.pages))
                row[f"filing_{key}"] = filing_rank(hits, q.doc_name)
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    out = {"questions": len(rows), "narrowed": sum(r["narrowed"] for r in rows),
           "own_filing_kept": sum(r["narrowed"] and r["own_filing_kept"] for r in rows)}
    for key in ("off", "on"):
        ranks = [r[f"rank_{key}"] for r in rows]
        out[key] = {"hit@1": hit(ranks, 1), "hit@5": hit(ranks, 5),
                    "named_filing_first": hit([r[f"filing_{key}"] for r in rows], 1)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--name", default="scope_from_question")
    parser.add_argument("--company-only", action="store_true", help="ablation: no fiscal-year narrowing")
    args = parser.parse_args()
    if args.company_only:
        import storage.document_filter
        from storage.question_period import AskedPeriod, asked_period

        # the ablation: no period is ever named (the filing kind a question names still is)
        storage.document_filter.asked_period = lambda question: AskedPeriod(form=asked_period(question).form)
    settings, db, embedder, owner, docs = open_bench(args.home, args.user, create_user=False)
    sets = {"FinanceBench (human)": financebench_questions(), "synthetic (rule-written)": synthetic_questions()}
    payload: dict = {"filings": len(docs), "sets": {}}
    md = [f"Across all {len(docs)} filings ingested under one user, k=10, the shipped retrieval settings; "
          "`off` searches every filing, `on` narrows to the filings the question names first"
          f"{' (companies only: the fiscal-year step off)' if args.company_only else ''}.\n",
          "| questions | n | narrowed | own filing kept | hit@1 off → on | hit@5 off → on "
          "| named filing first off → on |",
          "|---|---|---|---|---|---|---|"]
    per_company: dict[str, dict[str, list[dict]]] = {}
    for name, questions in sets.items():
        questions = [q for q in questions if f"{q.doc_name}.pdf" in docs]
        rows = measure(db, embedder, settings, owner, docs, questions)
        s = summary(rows)
        payload["sets"][name] = {"summary": s, "questions": rows}
        md.append(f"| {name} | {s['questions']} | {s['narrowed']} | {s['own_filing_kept']} | "
                  f"{s['off']['hit@1']} → {s['on']['hit@1']} | {s['off']['hit@5']} → {s['on']['hit@5']} | "
                  f"{s['off']['named_filing_first']} → {s['on']['named_filing_first']} |")
        by_company: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            by_company[r["company"]].append(r)
        per_company[name] = by_company
        print(name, s, flush=True)
    md += ["\n## Company by company (each a held-back fold: nothing was fitted)\n",
           "| company | questions | hit@5 off → on | named filing first off → on |", "|---|---|---|---|"]
    for name, by_company in per_company.items():
        for company, rows in sorted(by_company.items()):
            s = summary(rows)
            md.append(f"| {company} ({name.split()[0]}) | {len(rows)} | {s['off']['hit@5']} → {s['on']['hit@5']} | "
                      f"{s['off']['named_filing_first']} → {s['on']['named_filing_first']} |")
    write_result(args.name, payload, "\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
