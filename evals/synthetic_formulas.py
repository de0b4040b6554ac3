"""Questions that define a formula, written by rule from the development filings' statement rows, and
what code computes for them (graph/formula.py): a set nobody read while writing the formula grammar.

    python evals/synthetic_formulas.py write [--per-filing 4]      # evals/data/synthetic_formulas.jsonl
    python evals/synthetic_formulas.py measure --home DIR [--user bench] [--closed-set-only --name NAME]

write: every page of a filing whose statement rows (evals/synthetic.py `candidates`, the product's own
parser) give two line items with values for the same three (or two) years yields questions in three
analyst shapes, with the rows' labels as the line items' names and the reference computed here from the
printed values:
  share    "the FY_a - FY_c 3 year average of X as a % of Y" (each year's X / Y, averaged)
  days     "defined as: 365 * (average X between FY_a and FY_b) / (FY_b Y)"
  combined "defined as: (FY_b X + change in Y between FY_a and FY_b) / FY_b Y"
A line item's values must be positive and read on one page (one table, one scale).

measure: for each question, the facts figure lookup offers within its filing (graph/nodes/facts.py
`candidate_facts`) and the calculation code makes (graph/formula.py `calculation_for`); correct when the
result equals the reference within half a unit of the rounding asked. Per company beside the mean.
Its wording copies the statement's labels, which favours row matching; the development questions
name their line items as analysts do (evals/facts_lookup.py reports those).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.common import FINANCEBENCH, load_jsonl, write_result

OUT = Path(__file__).parent / "data" / "synthetic_formulas.jsonl"
SHAPES = ("share", "days", "combined")


def _number(text: str) -> float:
    negative = text.strip().startswith("(") or text.strip().startswith("-")
    value = float(re.sub(r"[^\d.]", "", text) or 0)
    return -value if negative else value


def _label(label: str) -> str:
    return label[0].lower() + label[1:] if not label[:2].isupper() else label


def rows_by_page(parsed: Any) -> dict[int, dict[str, dict[int, float]]]:
    from evals.synthetic import candidates

    out: dict[int, dict[str, dict[int, float]]] = collections.defaultdict(lambda: collections.defaultdict(dict))
    for c in candidates(parsed):
        out[c["page"]][c["label"]].setdefault(int(c["year"]), _number(c["value"]))
    return out


def questions_for(doc: dict[str, Any], parsed: Any, per_filing: int, rng: random.Random) -> list[dict[str, Any]]:
    pages = rows_by_page(parsed)
    # a label printed on several pages names several rows (a segment table's "Cost of sales"): which one a
    # reference means is not the question's to say
    seen = collections.Counter(label.lower() for rows in pages.values() for label in rows)
    pairs = []
    for page, rows in sorted(pages.items()):
        labels = sorted(label for label, by_year in rows.items()
                        if len(by_year) >= 2 and all(v > 0 for v in by_year.values()) and seen[label.lower()] == 1)
        for i, x in enumerate(labels):
            for y in labels[i + 1:]:
                years = sorted(set(rows[x]) & set(rows[y]))
                if len(years) >= 2 and x.lower() not in y.lower() and y.lower() not in x.lower():
                    pairs.append((page, x, y, years, rows))
    rng.shuffle(pairs)
    out: list[dict[str, Any]] = []
    used: set[int] = set()
    company = doc["company"]
    for page, x, y, years, rows in pairs:
        if len(out) >= per_filing:
            break
        if page in used:
            continue
        shape = SHAPES[len(out) % len(SHAPES)]
        if shape == "share" and len(years) < 3:
            shape = "combined"
        vx, vy = rows[x], rows[y]
        lx, ly = _label(x), _label(y)
        if shape == "share":
            span = years[-3:]
            question = (f"What is the FY{span[0]} - FY{span[-1]} 3 year average of {lx} as a % of {ly} for "
                        f"{company}? Answer in units of percents and round to one decimal place.")
            reference, decimals = sum(vx[t] / vy[t] for t in span) / 3 * 100, 1
        elif shape == "days":
            a, b = years[-2:]
            question = (f"What is {company}'s FY{b} {lx} days? It is defined as: 365 * (average {lx} between FY{a} "
                        f"and FY{b}) / (FY{b} {ly}). Round your answer to two decimal places.")
            reference, decimals = 365 * (vx[a] + vx[b]) / 2 / vy[b], 2
        else:  # combined
            a, b = years[-2:]
            question = (f"What is {company}'s FY{b} adjusted ratio? It is defined as: (FY{b} {lx} + change in {ly} "
                        f"between FY{a} and FY{b}) / FY{b} {ly}. Round your answer to two decimal places.")
            reference, decimals = (vx[b] + vy[b] - vy[a]) / vy[b], 2
        used.add(page)
        out.append({"id": f"{doc['doc_name']}-f{len(out) + 1:02d}", "company": company, "doc_name": doc["doc_name"],
                    "shape": shape, "question": question, "reference": round(reference, decimals),
                    "decimals": decimals, "page": page})
    return out


def write(args: argparse.Namespace) -> int:
    from evals.synthetic import parsed_filing

    rng = random.Random(args.seed)
    written = []
    for doc in sorted(load_jsonl(FINANCEBENCH / "documents.jsonl"), key=lambda d: d["doc_name"]):
        found = questions_for(doc, parsed_filing(doc), args.per_filing, rng)
        print(f"{doc['doc_name']}: {len(found)} questions", file=sys.stderr)
        written.extend(found)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(q) + "\n" for q in written))
    print(f"{len(written)} questions over {len({q['doc_name'] for q in written})} filings -> {args.out}")
    return 0


def measure(args: argparse.Namespace) -> int:
    from evals.common import bench_user, eval_runtime
    from graph import facts as lookup
    from graph.calc import CalcError, choose_op, compute
    from graph.candidates import candidate_facts
    from graph.figures import asked_unit
    from graph.formula import calculation_for
    from graph.operands import choose
    from storage.evidence_store import PostgresShelf

    runtime = eval_runtime(args.home)
    owner, docs = bench_user(runtime, args.user, create_user=False)
    if owner is None:
        print(f"no user {args.user!r}: ingest the development filings first", file=sys.stderr)
        return 2
    rows = []
    with runtime.database.connection() as conn:
        shelf = PostgresShelf(conn, [owner])
        for q in load_jsonl(args.questions):
            doc = docs.get(f"{q['doc_name']}.pdf")
            if doc is None:
                continue
            picked, ignore = candidate_facts(shelf, q["question"], [doc], set())
            facts = [lookup.as_fact(n, c, 1) for n, c in enumerate(picked, 1)]
            if args.closed_set_only:  # the ablation: what code computed before formulas were read
                op = choose_op(q["question"])
                request = choose(q["question"], op, facts, ignore) if op else None
                try:
                    result = compute(request, facts, asked_unit(q["question"])) if request else None
                except CalcError:
                    result = None
            else:
                result = calculation_for(q["question"], facts, ignore=ignore,
                                         words=shelf.glossary_words)
            value = result.value if result is not None else None
            correct = value is not None and abs(value - q["reference"]) <= 0.5 * 10 ** -q["decimals"] + 1e-9
            rows.append({**q, "computed": result.text if result else None,
                         "working": result.working if result else None, "correct": correct,
                         "wrong": result is not None and not correct})
    def share(rs: list[dict[str, Any]], key: str) -> dict[str, Any]:
        return scoring.share(sum(r[key] for r in rs), len(rs))

    per_company = collections.defaultdict(list)
    for r in rows:
        per_company[r["company"]].append(r)
    means = [share(rs, "correct")["share"] for rs in per_company.values()]
    payload = {"all": {"correct": share(rows, "correct"), "wrong": share(rows, "wrong")},
               "by_shape": {s: {"correct": share([r for r in rows if r["shape"] == s], "correct"),
                                "wrong": share([r for r in rows if r["shape"] == s], "wrong")} for s in SHAPES},
               "mean_over_companies": round(sum(means) / len(means), 3) if means else None,
               "companies": {c: share(rs, "correct") for c, rs in sorted(per_company.items())}, "rows": rows}
    md = ["# Formulas a question defines, computed by code (synthetic, not read while writing the grammar)", "",
          f"{len(rows)} questions over {len(per_company)} companies (evals/data/synthetic_formulas.jsonl); "
          "correct: the computed figure equals the reference within the rounding asked; wrong: a figure was "
          "computed and it is not the reference (no figure at all is neither).", "",
          "| shape | questions | correct | wrong figure |", "|---|---|---|---|"]
    for s, v in payload["by_shape"].items():
        md.append(f"| {s} | {v['correct']['n']} | {v['correct']['share']} | {v['wrong']['share']} |")
    md.append(f"| all | {len(rows)} | {payload['all']['correct']['share']} | {payload['all']['wrong']['share']} |")
    md += ["", f"Mean over companies (correct): {payload['mean_over_companies']}"]
    write_result(args.name, payload, "\n".join(md) + "\n", directory=args.results_dir)
    print("\n".join(md))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--per-filing", type=int, default=4)
    w.add_argument("--seed", type=int, default=2026)
    w.add_argument("--out", type=Path, default=OUT)
    m = sub.add_parser("measure")
    m.add_argument("--home", type=Path, default=None)
    m.add_argument("--user", default="bench")
    m.add_argument("--questions", type=Path, default=OUT)
    m.add_argument("--name", default="synthetic_formulas")
    m.add_argument("--results-dir", type=Path, default=None, help=argparse.SUPPRESS)  # the gate writes elsewhere
    m.add_argument("--closed-set-only", action="store_true",
                   help="compute only one closed-set operation (graph/operands.py), as before formulas were read")
    args = p.parse_args(argv)
    return write(args) if args.cmd == "write" else measure(args)


if __name__ == "__main__":
    sys.exit(main())
