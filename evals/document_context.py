"""How well ingestion/context.py reads company, form and period year from the development filings.

    python evals/document_context.py [--name document_context]

Parses each PDF of the FinanceBench development split as ingestion does (PyMuPDF rows, no file
name) and scores the extracted context against documents.jsonl, which is read here only to score.
A company counts as found when every word of the data set's name is in the extracted name, or the
name is the extracted name's initials ("AMD"); the form when it is the same form; the year when
the fiscal year the document names (a report's date for an 8-K) is the data set's period.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, write_result

FORMS = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "earnings release"}


def words(name: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", name.lower())


def company_matches(expected: str, found: str) -> bool:
    got = words(found)
    initials = "".join(w[0] for w in got if w not in ("inc", "co", "corp", "plc", "and"))
    return bool(got) and (set(words(expected)) <= set(got) or "".join(words(expected)) == initials)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", default="document_context")
    args = parser.parse_args()

    from ingestion.context import extract_context
    from ingestion.parse import parse_pdf

    truth = {d["doc_name"]: d for d in load_jsonl(FINANCEBENCH / "documents.jsonl")}
    rows_out: list[dict] = []
    for pdf in sorted((FINANCEBENCH / "pdfs").glob("*.pdf")):
        expected = truth[pdf.stem]
        parsed = parse_pdf(pdf.read_bytes())
        started = time.perf_counter()
        ctx = extract_context(parsed.rows, {u.page: u.title for u in parsed.units if u.title})
        seconds = time.perf_counter() - started
        year = ctx.fiscal_year or (ctx.period_end.year if ctx.period_end else None)
        rows_out.append({
            "document": pdf.stem, "company": ctx.company, "form": ctx.form, "period": ctx.period,
            "period_end": ctx.period_end, "header": ctx.header(), "ms": round(seconds * 1000, 2),
            "expected": {k: expected[k] for k in ("company", "doc_type", "doc_period")},
            "company_ok": company_matches(expected["company"], ctx.company),
            "form_ok": ctx.form == FORMS.get(expected["doc_type"].lower(), expected["doc_type"]),
            "year_ok": year == expected["doc_period"],
        })
    n = len(rows_out)
    summary = {key: sum(r[f"{key}_ok"] for r in rows_out) for key in ("company", "form", "year")}
    all_ok = sum(r["company_ok"] and r["form_ok"] and r["year_ok"] for r in rows_out)
    ms = sorted(r["ms"] for r in rows_out)
    lines = [
        f"Extracted from the documents' own text (never the file name), scored against documents.jsonl on the "
        f"{n} development filings: company {summary['company']}/{n}, form {summary['form']}/{n}, "
        f"period year {summary['year']}/{n}; all three {all_ok}/{n}. Extraction time per document "
        f"(parsed rows in, context out): median {ms[n // 2]} ms, max {ms[-1]} ms.",
        "",
        "| document | company | form | period | period end | ok (company, form, year) | data set says |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows_out:
        marks = "".join("✓" if r[f"{k}_ok"] else "✗" for k in ("company", "form", "year"))
        e = r["expected"]
        lines.append(f"| {r['document']} | {r['company']} | {r['form']} | {r['period']} | {r['period_end'] or ''} | "
                     f"{marks} | {e['company']}, {e['doc_type']}, {e['doc_period']} |")
    write_result(args.name, {"documents": n, "found": summary, "all_three": all_ok, "rows": rows_out},
                 "\n".join(lines))
    print("\n".join(lines[:1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
