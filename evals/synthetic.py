"""Page-grounded synthetic questions over the development filings: a larger set nobody tuned on.

    python evals/synthetic.py [--per-filing 15] [--out evals/data/synthetic_questions.jsonl]

Written by rule, not by reading misses: every statement row of a filing that the product's own
parser (ingestion.parse) reads as "label | value | value ..." under a header row of years gives a
candidate question "what was COMPANY's LABEL in YEAR", whose evidence pages are the pages of that
filing where the label and that year's value both appear. A candidate is dropped when that pair
shows on more than MAX_PAGES pages (it would be answerable from anywhere), when the label is a
generic total or too short to name a line item, or when the value is zero or a dash. At most
--per-filing questions per filing, at most one per page, picked by a fixed seed. The company name
is the data set's (documents.jsonl): a question names its company as a person would.

What it measures: finding the page that holds a named line item for a named year, within a filing
and across a user's filings. Its wording copies the statement's label, which favours the
full-text side; the 51 human-written questions (evals/cv.py reports both) do not.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl

OUT = Path(__file__).parent / "data" / "synthetic_questions.jsonl"
# The rules below are the generator's own, frozen with the file they wrote: ingestion may change
# how it reads statements without moving the questions.
YEAR_RE = re.compile(r"\b(19[5-9]\d|20[0-9]\d)\b")
ANNOTATED = re.compile(r"^(19|20)\d\d: ")  # a figure ingestion labelled with its year (ingestion/tables.py)
VALUE_RE = re.compile(r"^\(?-?\$?\s*\d[\d,]*(\.\d+)?\)?%?$")
MAX_PAGES = 2  # a (label, value) pair on more pages is answerable from anywhere
HEADER_LOOKBACK = 12  # rows above a statement row searched for its header of years
GENERIC = re.compile(r"^(total|other|net|subtotal|balance|amount|thereafter|\d)", re.I)
TEMPLATES = (
    "What was {company}'s {label} in fiscal {year}?",
    "How much did {company} report for {label} in {year}?",
    "What amount of {label} did {company} report for FY{year}?",
    "According to its filing, what were {company}'s {label} for {year}?",
)


def loose_years(cells: list[str]) -> list[str]:
    """A header row's years, one per cell that holds digits, repeats allowed ("2022 | 2021 | 2022 |
    2021": a 10-Q's three and six months), else []."""
    years = [m.group(1) for cell in cells for m in [YEAR_RE.search(cell)] if m]
    with_digits = [c for c in cells if any(ch.isdigit() for ch in c)]
    return years if len(years) >= 2 and len(years) == len(with_digits) else []


def header_years(cells: list[str]) -> list[str]:
    """The years of a header row ("2018 | 2017", "Year ended Dec 31, 2018 | 2017"), each once, else []."""
    years = loose_years(cells)
    return years if len(set(years)) == len(years) else []


def statement_row(cells: list[str]) -> tuple[str, list[str]] | None:
    """(label, values) of a row "label | value | value ...", "$" cells dropped."""
    cells = [c.strip() for c in cells if c.strip() not in ("$", "")]
    if len(cells) < 3:
        return None
    label, values = cells[0].rstrip(":").strip(), cells[1:]
    if not all(VALUE_RE.match(v.replace(" ", "")) for v in values):
        return None
    words = re.findall(r"[A-Za-z]+", label)
    if len(words) < 2 or len(label) > 80 or GENERIC.match(label) or YEAR_RE.search(label):
        return None
    return label, values


def rows_with_years(parsed, header: Callable[[list[str]], list[str]] = header_years) -> list[dict]:
    """Every statement row of the filing with its header's years: label, years, values, page."""
    by_page: dict[int, list[list[str]]] = defaultdict(list)
    for row in parsed.rows:
        by_page[row.page].append([ANNOTATED.sub("", cell) for cell in row.text.split(" | ")])
    out = []
    for page, rows in by_page.items():
        for i, cells in enumerate(rows):
            found = statement_row(cells)
            if found is None:
                continue
            label, values = found
            years = next((y for r in reversed(rows[max(0, i - HEADER_LOOKBACK):i]) if (y := header(r))), [])
            if len(years) == len(values):
                out.append({"label": label, "years": years, "values": values, "page": page})
    return out


def nonzero(value: str) -> bool:
    """A value that is not zero or a dash: something a question can ask for."""
    return bool(re.sub(r"[^\d]", "", value).strip("0"))


def question_label(label: str) -> str:
    """A row label as a question writes it: lower-cased first letter, acronyms kept ("EBITDA")."""
    return label[0].lower() + label[1:] if not label[:2].isupper() else label


def candidates(parsed) -> list[dict]:
    """Every (label, year, value, page) a statement row of the filing gives."""
    return [{"label": r["label"], "year": year, "value": value, "page": r["page"]}
            for r in rows_with_years(parsed) for year, value in zip(r["years"], r["values"], strict=True)
            if nonzero(value)]


def evidence_pages(parsed, label: str, value: str) -> set[int]:
    """Pages of the filing whose text holds both the label and the value."""
    texts: dict[int, list[str]] = defaultdict(list)
    for row in parsed.rows:
        texts[row.page].append(row.text.lower())
    low = label.lower()
    return {p for p, rows in texts.items() if any(low in r and value in r for r in rows)}


def questions_for(doc: dict, parsed, per_filing: int, rng: random.Random) -> list[dict]:
    pool = candidates(parsed)
    rng.shuffle(pool)
    out: list[dict] = []
    used_pages: set[int] = set()
    for c in pool:
        if len(out) >= per_filing:
            break
        pages = evidence_pages(parsed, c["label"], c["value"])
        if not pages or len(pages) > MAX_PAGES or pages & used_pages:
            continue
        used_pages |= pages
        template = TEMPLATES[len(out) % len(TEMPLATES)]
        out.append({"id": f"{doc['doc_name']}-{len(out) + 1:02d}", "company": doc["company"],
                    "doc_name": doc["doc_name"],
                    "question": template.format(company=doc["company"], label=question_label(c["label"]),
                                                year=c["year"]),
                    "answer": c["value"], "pages": sorted(pages)})
    return out


def parsed_filing(doc: dict):
    """The data set's PDF of `doc` as the product's parser reads it (no OCR: the filings have text)."""
    from ingestion.parse import OcrOptions, parse_pdf

    return parse_pdf((FINANCEBENCH / "pdfs" / f"{doc['doc_name']}.pdf").read_bytes(), ocr=OcrOptions(enabled=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-filing", type=int, default=15)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    written = []
    for doc in sorted(load_jsonl(FINANCEBENCH / "documents.jsonl"), key=lambda d: d["doc_name"]):
        parsed = parsed_filing(doc)
        found = questions_for(doc, parsed, args.per_filing, rng)
        print(f"{doc['doc_name']}: {len(found)} questions", file=sys.stderr)
        written.extend(found)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(q) + "\n" for q in written))
    print(f"{len(written)} questions over {len({q['doc_name'] for q in written})} filings -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
