"""Rule-written questions of the kinds unseen filings bring: quarters, comparative years, and
companies named the ways people write them (tickers, legal names, former names).

    python evals/synthetic_kinds.py [--per-filing 8] [--out evals/data/synthetic_kinds.jsonl]

Same source and same frozen row rules as evals/synthetic.py (a statement row "label | value ..."
under a header of years, its evidence the pages holding the label and the value), one kind per
question, each kind by rule, nothing read from a miss:

- `quarter`: a 10-Q's first column (its own period), asked as "the second quarter of fiscal 2023",
  "Q2 FY23", "Q2 2023", the quarter and fiscal year the data set names the filing by;
- `yoy`: a 10-K row's two most recent years, asked as a change "from 2021 to 2022" (evidence: the
  pages holding the label and both values);
- `comparative`: a 10-K row's older year, asked alone, only when the user's filings hold no
  10-K of that company for that year (the comparative is then the only place it is written);
- `ticker`, `legal_name`, `former_name`: a question of the `yoy` or `comparative` rows, the company
  named by its trading symbol, its registrant name, or the name it filed under before a rename
  (NAMES: public facts about the issuers, not read from the filings by the product's code).

evals/fusion_cv.py reports each kind's held-back folds separately.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl
from evals.synthetic import (
    MAX_PAGES,
    evidence_pages,
    loose_years,
    nonzero,
    parsed_filing,
    question_label,
    rows_with_years,
)

OUT = Path(__file__).parent / "data" / "synthetic_kinds.jsonl"
# (ticker, registrant name, former name or "") of each data-set company: public facts.
NAMES = {
    "3M": ("MMM", "3M Company", ""),
    "AMD": ("AMD", "Advanced Micro Devices, Inc.", ""),
    "Activision Blizzard": ("ATVI", "Activision Blizzard, Inc.", ""),
    "Amazon": ("AMZN", "Amazon.com, Inc.", ""),
    "Amcor": ("AMCR", "Amcor plc", ""),
    "Best Buy": ("BBY", "Best Buy Co., Inc.", ""),
    "Block": ("SQ", "Block, Inc.", "Square"),
    "Corning": ("GLW", "Corning Incorporated", ""),
    "General Mills": ("GIS", "General Mills, Inc.", ""),
    "MGM Resorts": ("MGM", "MGM Resorts International", ""),
    "Ulta Beauty": ("ULTA", "Ulta Beauty, Inc.", ""),
    "Walmart": ("WMT", "Walmart Inc.", "Wal-Mart Stores"),
}
ORDINALS = ("first", "second", "third", "fourth")
QUARTER_TEMPLATES = (
    "What was {company}'s {label} in the {ordinal} quarter of fiscal {fy}?",
    "How much {label} did {company} report for Q{q} FY{yy}?",
    "What were {company}'s {label} in Q{q} {fy}?",
)
YOY_TEMPLATES = (
    "How did {company}'s {label} change from {old} to {new}?",
    "What was the year-over-year change in {company}'s {label} from {old} to {new}?",
)
COMPARATIVE_TEMPLATES = (
    "What was {company}'s {label} in {year}?",
    "How much did {company} report for {label} in fiscal {year}?",
)
_QUARTER_NAME = re.compile(r"_(\d{4})Q([1-4])_10Q$")


def _pages(parsed, label: str, values: list[str]) -> set[int]:
    pages = evidence_pages(parsed, label, values[0])
    for value in values[1:]:
        pages &= evidence_pages(parsed, label, value)
    return pages


def quarter_questions(doc: dict, parsed, per_filing: int, rng: random.Random) -> list[dict]:
    named = _QUARTER_NAME.search(doc["doc_name"])
    if not named:
        return []
    fy, q = int(named.group(1)), int(named.group(2))
    pool = [r for r in rows_with_years(parsed, loose_years) if nonzero(r["values"][0])]
    rng.shuffle(pool)
    out: list[dict] = []
    used: set[int] = set()
    for r in pool:
        if len(out) >= per_filing:
            break
        pages = _pages(parsed, r["label"], r["values"][:1])
        if not pages or len(pages) > MAX_PAGES or pages & used:
            continue
        used |= pages
        text = QUARTER_TEMPLATES[len(out) % len(QUARTER_TEMPLATES)].format(
            company=doc["company"], label=question_label(r["label"]), ordinal=ORDINALS[q - 1], q=q, fy=fy,
            yy=f"{fy % 100:02d}")
        out.append(_question(doc, "quarter", len(out), text, r["values"][0], pages))
    return out


def annual_questions(doc: dict, parsed, per_filing: int, rng: random.Random,
                     held_years: set[int]) -> list[dict]:
    """yoy and comparative questions of a 10-K, then the same rows with the company renamed."""
    pool = [r for r in rows_with_years(parsed) if all(nonzero(v) for v in r["values"][:2])]
    rng.shuffle(pool)
    out: list[dict] = []
    used: set[int] = set()
    ticker, legal, former = NAMES[doc["company"]]
    names = [("ticker", ticker), ("legal_name", legal)] + ([("former_name", former)] if former else [])
    rows = 0
    for r in pool:
        if rows >= per_filing:
            break
        order = sorted(range(len(r["years"])), key=lambda i: r["years"][i], reverse=True)
        new, old = order[0], order[1]
        older = [i for i in order[1:] if int(r["years"][i]) not in held_years and nonzero(r["values"][i])]
        kind = "yoy" if rows % 2 == 0 or not older else "comparative"
        picked = [new, old] if kind == "yoy" else [older[0]]
        pages = _pages(parsed, r["label"], [r["values"][i] for i in picked])
        if not pages or len(pages) > MAX_PAGES or pages & used:
            continue
        used |= pages
        rows += 1
        for how, company in [("", doc["company"]), names[rows % len(names)]]:
            if kind == "yoy":
                text = YOY_TEMPLATES[rows % len(YOY_TEMPLATES)].format(
                    company=company, label=question_label(r["label"]), old=r["years"][old], new=r["years"][new])
            else:
                text = COMPARATIVE_TEMPLATES[rows % len(COMPARATIVE_TEMPLATES)].format(
                    company=company, label=question_label(r["label"]), year=r["years"][picked[0]])
            answer = " -> ".join(r["values"][i] for i in reversed(picked))
            out.append(_question(doc, how or kind, len(out), text, answer, pages))
    return out


def _question(doc: dict, kind: str, n: int, text: str, answer: str, pages: set[int]) -> dict:
    return {"id": f"{doc['doc_name']}-{kind}-{n + 1:02d}", "kind": kind, "company": doc["company"],
            "doc_name": doc["doc_name"], "question": text, "answer": answer, "pages": sorted(pages)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-filing", type=int, default=8, help="rows per filing (a 10-Q: twice as many)")
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    docs = sorted(load_jsonl(FINANCEBENCH / "documents.jsonl"), key=lambda d: d["doc_name"])
    annual: dict[str, set[int]] = defaultdict(set)  # the 10-K years of each company in the set
    for d in docs:
        if d["doc_type"] == "10k":
            annual[d["company"]].add(int(d["doc_period"]))
    written = []
    for doc in docs:
        if doc["doc_type"] not in ("10k", "10q"):
            continue
        parsed = parsed_filing(doc)
        if doc["doc_type"] == "10q":
            found = quarter_questions(doc, parsed, 2 * args.per_filing, rng)
        else:
            found = annual_questions(doc, parsed, args.per_filing, rng, annual[doc["company"]])
        print(f"{doc['doc_name']}: {len(found)} questions", file=sys.stderr, flush=True)
        written.extend(found)
    args.out.write_text("".join(json.dumps(q) + "\n" for q in written))
    kinds = defaultdict(int)
    for q in written:
        kinds[q["kind"]] += 1
    print(f"{len(written)} questions ({dict(kinds)}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
