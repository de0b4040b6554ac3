"""What code finds before any model writes (issue 24): figure lookup, calculations, and refusals before search.

    THOTQEN_HOME=DIR python evals/facts_lookup.py [--user bench] [--name facts_lookup]

No language model runs; every figure comes from the stored cells of the filings (graph/facts.py,
graph/operands.py, graph/calc.py, the answerable node's checks), so this is cheap to rerun.
  figure lookup     for each figure question (FinanceBench development, scoped to its filing; the
                    synthetic set's statement-row questions), whether a fact offered to generation
                    (or the calculation code did) states every reference figure (evals/answers.py
                    `line_holds`, rounding as the question asks); and whether the first fact does
  refused early     out-of-scope questions (evals/data/out_of_scope.jsonl, across all filings) the
                    answerable checks refuse before any search, by kind; answerable questions they
                    refuse (within their filing and across all filings)
Per company beside the mean; the development questions were read while the rules were written
(tuned on), the synthetic and out-of-scope sets were not. Writes evals/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import collections
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.answers import Item, dev_items, gold_figures, line_holds, oos_items, synthetic_items
from evals.common import bench_user, eval_runtime, write_result
from evals.scoring import share
from graph import facts as lookup
from graph.candidates import candidate_facts
from graph.figures import asked_unit
from graph.formula import calculation_for
from graph.unanswerable import why_unanswerable
from storage.evidence_store import PostgresShelf


def offered(conn: Any, owner: int, doc: uuid.UUID, question: str) -> tuple[list[str], str | None]:
    """The facts' values as generation would see them, and the calculation's result (graph/nodes/facts.py, compute)."""
    shelf = PostgresShelf(conn, [owner])
    picked, ignore = candidate_facts(shelf, question, [doc], set())
    asked = asked_unit(question)
    facts = [lookup.as_fact(n, c, 1) for n, c in enumerate(picked, 1)]
    result = calculation_for(question, facts, ignore=ignore, words=shelf.glossary_words)
    return [lookup.shown_value(f, asked) for f in facts], result.text if result else None


def refused_early(conn: Any, owner: int, question: str, scope: list[uuid.UUID] | None) -> bool:
    return bool(why_unanswerable(PostgresShelf(conn, [owner]), question, scope))


def lookup_rows(conn: Any, owner: int, docs: dict[str, uuid.UUID], items: list[Item]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        doc = docs.get(f"{item.doc_name}.pdf")
        golds = gold_figures(item)
        if item.kind != "figure" or doc is None or not golds:
            continue
        values, result = offered(conn, owner, doc, item.question)
        lines = [*values, *([result] if result else [])]
        rows.append({"id": item.id, "set": item.set, "company": item.company, "question": item.question,
                     "reference": item.reference, "offered": values[:4], "calculation": result,
                     "held": line_holds(lines, golds, item.question, 0.02),
                     "first": line_holds(([result] if result else values[:1]), golds, item.question, 0.02)})
    return rows


def summary(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    per: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        per[r["company"] or "?"].append(r)
    companies = {c: share(sum(r[key] for r in rs), len(rs)) for c, rs in sorted(per.items())}
    means = [v["share"] for v in companies.values() if v["share"] is not None]
    return {"all": share(sum(r[key] for r in rows), len(rows)),
            "mean_over_companies": round(sum(means) / len(means), 3) if means else None, "companies": companies}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--user", default="bench")
    p.add_argument("--name", default="facts_lookup")
    p.add_argument("--results-dir", type=Path, default=None, help=argparse.SUPPRESS)  # the gate writes elsewhere
    args = p.parse_args(argv)
    runtime = eval_runtime(args.home)
    owner, docs = bench_user(runtime, args.user, create_user=False)
    if owner is None:
        print(f"no user {args.user!r}: ingest the development filings first", file=sys.stderr)
        return 2
    dev, synthetic = dev_items(), synthetic_items()
    with runtime.database.connection() as conn:
        rows = {"dev": lookup_rows(conn, owner, docs, dev), "synthetic": lookup_rows(conn, owner, docs, synthetic)}
        oos = collections.Counter()
        kinds = collections.Counter()
        for item in oos_items():
            kinds[item.kind] += 1
            oos[item.kind] += bool(refused_early(conn, owner, item.question, None))
        wrongly = {"within_filing": 0, "across_filings": 0}
        for item in dev:
            doc = docs.get(f"{item.doc_name}.pdf")
            wrongly["within_filing"] += bool(doc and refused_early(conn, owner, item.question, [doc]))
            wrongly["across_filings"] += bool(refused_early(conn, owner, item.question, None))
        known = [i for i in synthetic if docs.get(f"{i.doc_name}.pdf")]
        wrongly["synthetic_within_filing"] = sum(
            bool(refused_early(conn, owner, i.question, [docs[f"{i.doc_name}.pdf"]])) for i in known)
    payload = {
        "lookup": {s: {"held": summary(r, "held"), "first": summary(r, "first"), "rows": r} for s, r in rows.items()},
        "refused_early": {"out_of_scope": {k: share(oos[k], kinds[k]) for k in sorted(kinds)},
                          "out_of_scope_all": share(sum(oos.values()), sum(kinds.values())),
                          "answerable_refused": {k: share(v, len(known) if k.startswith("synthetic") else len(dev))
                                                 for k, v in wrongly.items()}},
    }
    md = ["# Figure lookup and refusals before search (no model)", "",
          f"`THOTQEN_HOME={args.home or '$THOTQEN_HOME'} python evals/facts_lookup.py --user {args.user}` "
          "(evals/facts_lookup.py has what each figure means).", "",
          "| set | figure questions | a fact or the calculation holds the reference "
          "| the first fact (or the calculation) does | mean over companies (held) |", "|---|---|---|---|---|"]
    for s, r in rows.items():
        held, first = summary(r, "held"), summary(r, "first")
        md.append(f"| {s}{' (read while writing the rules)' if s == 'dev' else ' (not read)'} | {held['all']['n']} "
                  f"| {held['all']['share']} | {first['all']['share']} | {held['mean_over_companies']} |")
    md += ["", "| refused before any search | share |", "|---|---|"]
    md += [f"| out of scope: {k} | {v['k']}/{v['n']} |" for k, v in payload["refused_early"]["out_of_scope"].items()]
    md += [f"| answerable, {k.replace('_', ' ')} | {v['k']}/{v['n']} |"
           for k, v in payload["refused_early"]["answerable_refused"].items()]
    write_result(args.name, payload, "\n".join(md) + "\n", directory=args.results_dir)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
