"""Who should pick the fact a figure answer states: the model (graph/nodes/choose.py) or code's ranking?

    THOTQEN_HOME=DIR python evals/bench_choose.py [--user bench] [--limit N] [--name choose]

For each lookup question (a figure asked for, no calculation: graph/compose.py) of the synthetic set
(statement-row questions, not read while the rules were written) and the development split, the
facts figure lookup offers in its filing (graph/nodes/facts.py `candidate_facts`) are put to the
model with the choose node's own prompt (graph/prompts.py `choose_messages`) and its constrained
reply. Scored: the model's pick states every reference figure (evals/answers.py `line_holds`);
the first fact (code's ranking) does; the model answered "none". For the out-of-scope set's
"figure not reported" questions (asked of their company's filings), "none" is the right reply.
Per company beside the mean. Writes evals/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.answers import Item, dev_items, gold_figures, line_holds, oos_items, synthetic_items  # noqa: E402
from evals.common import bench_user, eval_runtime, write_result  # noqa: E402
from graph import compose, prompts  # noqa: E402
from graph import facts as lookup  # noqa: E402
from graph.figures import asked_unit  # noqa: E402
from graph.nodes.choose import NONE, choice_model  # noqa: E402
from graph.nodes.facts import candidate_facts  # noqa: E402


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def scope_of(item: Item, docs: dict[str, uuid.UUID]) -> list[uuid.UUID]:
    if item.doc_name:
        return [d for name, d in docs.items() if name == f"{item.doc_name}.pdf"]
    return [d for name, d in docs.items() if item.company and _squash(item.company) in _squash(name)]


def ask(chain: Any, question: str, facts: list[Any]) -> tuple[str, float]:  # noqa: ANN401
    started = time.perf_counter()
    messages = prompts.choose_messages(question, lookup.fact_block(facts, asked_unit(question)))
    result = chain.invoke(messages, cheap=True, structured=choice_model(facts))
    tag = str(result.parsed.model_dump()["figure"]) if result.parsed is not None else NONE
    return tag, time.perf_counter() - started


def row_for(conn: Any, chain: Any, owner: int, item: Item, docs: dict[str, uuid.UUID]) -> dict[str, Any] | None:  # noqa: ANN401
    scope = scope_of(item, docs)
    if not scope or not compose.wants_one_figure(item.question) or compose.wants_a_calculation(item.question):
        return None
    golds = gold_figures(item) if item.answerable else []
    if item.answerable and (item.kind != "figure" or not golds):
        return None
    picked, _ignore = candidate_facts(conn, owner, item.question, scope, set())
    if not picked:
        return {"id": item.id, "set": item.set, "company": item.company, "facts": 0, "tag": None}
    facts = [lookup.as_fact(n, c, 1) for n, c in enumerate(picked, 1)]
    tag, seconds = ask(chain, item.question, facts)
    asked = asked_unit(item.question)
    chosen = next((f for f in facts if f"F{f.n}" == tag), None)
    row: dict[str, Any] = {"id": item.id, "set": item.set, "company": item.company, "facts": len(facts),
                           "tag": tag, "seconds": round(seconds, 2), "first": lookup.shown_value(facts[0], asked),
                           "chosen": lookup.shown_value(chosen, asked) if chosen else None}
    if golds:
        row["model_holds"] = bool(chosen) and line_holds([row["chosen"]], golds, item.question, 0.02)
        row["first_holds"] = line_holds([row["first"]], golds, item.question, 0.02)
        row["any_holds"] = line_holds([lookup.shown_value(f, asked) for f in facts], golds, item.question, 0.02)
    return row


def share(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    k = sum(bool(r.get(key)) for r in rows)
    per: dict[str, list[bool]] = collections.defaultdict(list)
    for r in rows:
        per[r["company"] or "?"].append(bool(r.get(key)))
    means = [sum(v) / len(v) for v in per.values() if v]
    return {"k": k, "n": len(rows), "share": round(k / len(rows), 3) if rows else None,
            "mean_over_companies": round(sum(means) / len(means), 3) if means else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--user", default="bench")
    p.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    p.add_argument("--name", default="choose")
    p.add_argument("--note", default="")
    args = p.parse_args(argv)
    runtime = eval_runtime(args.home)
    owner, docs = bench_user(runtime, args.user, create_user=False)
    if owner is None:
        print(f"no user {args.user!r}: ingest the development filings first", file=sys.stderr)
        return 2
    chain = runtime.chain()
    sets = {"synthetic": synthetic_items(), "dev": dev_items(),
            "not_reported": [i for i in oos_items() if i.kind == "figure_not_reported"]}
    rows: dict[str, list[dict[str, Any]]] = {}
    with runtime.database.connection() as conn:
        for name, items in sets.items():
            rows[name] = []
            for item in items:
                if args.limit and len(rows[name]) >= args.limit:
                    break
                if (row := row_for(conn, chain, owner, item, docs)) is not None:
                    rows[name].append(row)
                    print(f"{name} {len(rows[name])} {row.get('tag')} model={row.get('model_holds')} "
                          f"first={row.get('first_holds')} {row.get('seconds')}s", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for name, rs in rows.items():
        asked = [r for r in rs if r["facts"]]
        summary[name] = {"questions": len(rs), "with_facts": len(asked),
                         "none": {"k": sum(r["tag"] == NONE for r in asked), "n": len(asked)},
                         "model_holds": share(asked, "model_holds"), "first_holds": share(asked, "first_holds"),
                         "any_holds": share(asked, "any_holds"),
                         "p50_s": sorted(r["seconds"] for r in asked)[len(asked) // 2] if asked else None}
    md = ["# Who picks the fact a figure answer states: the model or code's ranking", "",
          f"LLM_ORDER={runtime.settings.llm_order or 'the default chain'}. {args.note}", "",
          "Lookup questions (a figure, no calculation) with the facts figure lookup offers in their filing. "
          "Answerable sets: does the model's pick / the first fact / any fact state the reference? "
          "Not reported: the model should reply none.", "",
          "| set | questions with facts | model's pick holds | first fact holds | any fact holds | model said none "
          "| p50 s per choice |", "|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        def cell(v: dict[str, Any]) -> str:
            return f"{v['share']} ({v['k']}/{v['n']}; companies {v['mean_over_companies']})" if v["n"] else "n/a"
        md.append(f"| {name} | {s['with_facts']} of {s['questions']} | {cell(s['model_holds'])} "
                  f"| {cell(s['first_holds'])} | {cell(s['any_holds'])} | {s['none']['k']}/{s['none']['n']} "
                  f"| {s['p50_s']} |")
    write_result(args.name, {"summary": summary, "rows": rows}, "\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
