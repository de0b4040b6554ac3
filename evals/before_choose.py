"""What `choose` and verify's yes/no rule would be shown, without the model: the graph run up to compute.

    python evals/before_choose.py --user bench --questions Q.jsonl [Q.jsonl ...] [--name before_choose]
    (THOTQEN_HOME selects the data dir; with the embedded local model first in the chain no node before
    choose calls a model unless HyDE is on)

For each question (rows with "id" and "question"): whether it is refused before any search (the guardrail,
graph/unanswerable.py; a row with no gold answer is out of scope), how many table facts choose would
offer, and whether a sentence of the excerpts' prose states the figure (graph/grounding.py
`figure_in_prose`), so that a "none" from the model leaves the answer to generate instead of refusing;
and, asked yes or no, whether
the excerpts deny what is asked (graph/claims.py `denied_by_evidence`: the answer is then "No" in their
words), beside the gold answer when the row has one. Run over the questions a stored run refused at
choose, or every yes/no question, it says which a rule could move, before any model run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import load_jsonl, states_before_choose, write_result


def probe(rows: list[dict], user: str, before_search: bool = False) -> list[dict]:
    from graph.claims import denied_by_evidence
    from graph.grounding import figure_in_prose
    from graph.nodes.generate import shown_excerpts
    from graph.reading import read

    out = []
    states = states_before_choose([r["question"] for r in rows], user, "before_choose", before_search=before_search)
    for row, state in zip(rows, states, strict=True):
        excerpts, _ = shown_excerpts(state)
        reading = read(row["question"])
        denial = denied_by_evidence(reading, {n: str(e.get("text") or "") for n, e in enumerate(excerpts, 1)})
        out.append({"id": row.get("id") or row.get("financebench_id"), "question": row["question"],
                    "early": "retrieve" not in (state.get("route") or []),
                    "facts": len(state.get("facts") or []),
                    "prose": figure_in_prose(excerpts, reading), "yes_no": reading.asks == "yes_no",
                    "denied": denial[1] if denial else None, "gold": row.get("answer")})
        print(out[-1], file=sys.stderr)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--user", required=True)
    p.add_argument("--questions", type=Path, nargs="+", required=True)
    p.add_argument("--name", default="before_choose")
    p.add_argument("--yes-no", action="store_true", help="only the questions read as asking yes or no")
    p.add_argument("--before-search", action="store_true",
                   help="stop at the search: only whether each question is refused before it")
    args = p.parse_args()
    rows = [r for path in args.questions for r in load_jsonl(path)]
    if args.yes_no:
        from graph.reading import read

        rows = [r for r in rows if read(r["question"]).asks == "yes_no"]
    found = probe(rows, args.user, args.before_search)
    lines = ["| id | refused before search | facts offered | prose states a figure | the excerpts deny it | gold | "
             "question |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['id']} | {'yes' if r['early'] else ''} | {r['facts']} | {'yes' if r['prose'] else 'no'} | "
              f"{(r['denied'] or '')[:90] if r['yes_no'] else 'n/a'} | {str(r['gold'] or '')[:40]} | {r['question']} |"
              for r in found]
    asked = [r for r in found if r["yes_no"]]
    answerable = [r for r in found if r["gold"] is not None]
    absent = [r for r in found if r["gold"] is None]
    summary = (f"refused before any search (guardrail or the answerable checks): {sum(r['early'] for r in answerable)}"
               f" of {len(answerable)} answerable questions, {sum(r['early'] for r in absent)} of {len(absent)} out of "
               "scope")
    if not args.before_search:  # else the runs stopped before the excerpts these read
        summary += (f"; {sum(r['prose'] for r in found)} of {len(found)} questions: a sentence of the prose states a "
                    f"figure; {sum(bool(r['denied']) for r in asked)} of {len(asked)} yes/no questions: the excerpts "
                    "deny what is asked")
    write_result(args.name, {"rows": found, "summary": summary}, summary + ".\n\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
