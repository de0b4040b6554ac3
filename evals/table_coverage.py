"""What share of financial-statement rows ingestion reads into cells with a period and a scale.

    python -m evals.table_coverage PDF... [--ocr-pages N]

A statement page is one whose first rows name a consolidated statement or balance sheet; its
statement rows are the rows parse.py tagged as table rows that carry a label and at least one value
(header rows of years or dates excluded).
For each document: how many of those rows got cells (ingestion/tables.py), how many have every
cell placed in a period column, and how many carry a stated scale (or are per-share / percent rows,
which are never scaled). `--ocr-pages N` also rasterises the first N statement pages and reads them
again through OCR, the same count on recognised text. Prints one JSON line per document and a total.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf

from evals.pdfs import rasterised
from ingestion.context import extract_context
from ingestion.numbers import read_values
from ingestion.parse import OcrOptions, parse_pdf
from ingestion.periods import is_header_text
from ingestion.tables import build_cells
from ingestion.units import Parsed

STATEMENT = re.compile(r"\bconsolidated\b.*\b(?:statements?|balance\s+sheets?)\b|\bstatements?\s+of\s+"
                       r"(?:operations|income|earnings|cash\s+flows|financial\s+position)\b", re.I)


def statement_pages(parsed: Parsed) -> set[int]:
    first: dict[int, list[str]] = {}
    for row in parsed.rows:
        first.setdefault(row.page, [])
        if len(first[row.page]) < 8:
            first[row.page].append(row.text)
    return {page for page, texts in first.items()
            if any(STATEMENT.search(t) and len(t) < 90 and "|" not in t for t in texts)}


def statement_rows(parsed: Parsed, pages: set[int]) -> set[int]:
    found = set()
    for i, row in enumerate(parsed.rows):
        cells = row.text.split(" | ")
        if row.page in pages and row.table is not None and len(cells) > 1 and any(c.strip() for c in cells[:1]) \
                and not read_values(cells[0]) and any(read_values(c) for c in cells[1:]) \
                and not all(is_header_text(c) for c in cells[1:]):  # a header row names periods
            found.add(i)
    return found


def coverage(parsed: Parsed, pages: set[int] | None = None) -> dict:
    pages = statement_pages(parsed) if pages is None else pages
    rows = statement_rows(parsed, pages)
    cells = build_cells(parsed, extract_context(parsed.rows))
    by_row: dict[int, list] = {}
    for cell in cells:
        by_row.setdefault(cell.row_index, []).append(cell)
    read = [i for i in rows if i in by_row]
    period = [i for i in read if all(c.fiscal_year is not None for c in by_row[i])]
    scale = [i for i in read if all(c.scale_words or c.unit in ("%",) or c.unit.endswith("/share")
                                    for c in by_row[i])]
    return {"statement_pages": len(pages), "statement_rows": len(rows), "with_cells": len(read),
            "with_period": len(period), "with_scale": len(scale), "cells": len(cells)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", nargs="+", type=Path)
    parser.add_argument("--ocr-pages", type=int, default=0)
    args = parser.parse_args()
    total = {"statement_rows": 0, "with_cells": 0, "with_period": 0, "with_scale": 0}
    ocr_total = dict(total)
    for path in args.pdfs:
        data = path.read_bytes()
        started = time.perf_counter()
        parsed = parse_pdf(data, ocr=OcrOptions(enabled=False))
        result = {"document": path.name, **coverage(parsed), "seconds": round(time.perf_counter() - started, 1)}
        for key in total:
            total[key] += result[key]
        if args.ocr_pages:
            pages = sorted(statement_pages(parsed))[:args.ocr_pages]
            with pymupdf.open(stream=data, filetype="pdf") as doc:
                sub = pymupdf.open()
                for page in pages:
                    sub.insert_pdf(doc, from_page=page - 1, to_page=page - 1)
                scan = rasterised(sub.tobytes())
            recognised = parse_pdf(scan, ocr=OcrOptions(enabled=True))
            ocr = coverage(recognised, set(range(1, len(pages) + 1)))
            result["ocr"] = ocr
            for key in ocr_total:
                ocr_total[key] += ocr[key]
        print(json.dumps(result), flush=True)

    def shares(counts: dict) -> dict:
        n = max(counts["statement_rows"], 1)
        keys = ("with_cells", "with_period", "with_scale")
        return {**counts, **{f"share_{k}": round(counts[k] / n, 3) for k in keys}}

    print(json.dumps({"total": shares(total), **({"ocr_total": shares(ocr_total)} if args.ocr_pages else {})}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
