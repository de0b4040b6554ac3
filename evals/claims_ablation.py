"""What each claim check (graph/claims.py) did to the answers of a genre run: kept only with a gain.

    python evals/claims_ablation.py [--rows ROWS.jsonl ...] [--name claims_ablation]

Offline, from runs' rows, several files pooled (evals/genre.py keeps each answer's `verification`:
the model's draft and the sentences each check removed). For each check, the answer without it is the answer with the
sentences that check removed put back (the draft's wording, when the check had left nothing). Both
are scored as evals/genre.py scores answers; a check earns its place when it turned more wrong
answers into refusals (or right ones) than right answers into refusals or wrong ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import RESULTS, load_jsonl, write_result
from evals.genre import DATA, right
from evals.scoring import is_refusal_text
from graph.claims import ANSWER_CHECKS, CHECKS, REFERS_TO_STRUCK


def outcome(question: dict, answer: str) -> str:
    if not answer.strip() or is_refusal_text(answer):
        return "refused"
    if question.get("kind") in (None, "absent", "not_stated", "general", "oos"):
        return "answered out of scope"
    return "right" if right(question, answer) else "wrong"


def without(row: dict, check: str) -> str:
    """The answer the user would have read without `check`: its removed sentences put back."""
    claims = [c for c in (row.get("verification") or {}).get("claims") or [] if c["check"] == check]
    if not claims:
        return row["answer"]
    restored = " ".join(c["sentence"] for c in claims)
    return restored if row.get("refused") else f"{row['answer']} {restored}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=Path, nargs="+", default=[RESULTS / "genre_after.rows.jsonl"])
    p.add_argument("--name", default="claims_ablation")
    args = p.parse_args()
    questions = {q["id"]: q for f in sorted(DATA.glob("genre_*.jsonl")) for q in load_jsonl(f)}  # held-back too
    rows = [r for f in args.rows for r in load_jsonl(f) if r.get("id") in questions]
    table = []
    why = {c.name: c.why for c in (*CHECKS, *ANSWER_CHECKS)}
    why[REFERS_TO_STRUCK] = "opens \"This ...\" or \"It ...\" after a struck sentence: it speaks of nothing left"
    for check in why:
        moves: dict[str, int] = {}
        for row in rows:
            q = questions[row["id"]]
            before, after = outcome(q, without(row, check)), outcome(q, row["answer"])
            if before != after:
                moves[f"{before} -> {after}"] = moves.get(f"{before} -> {after}", 0) + 1
        gained = sum(n for move, n in moves.items() if move.startswith(("wrong", "answered out of scope")))
        lost = sum(n for move, n in moves.items() if move.startswith("right"))
        table.append({"check": check, "why": why[check], "changed": sum(moves.values()), "moves": moves,
                      "wrong_or_out_of_scope_stopped": gained, "right_lost": lost,
                      "verdict": "gain" if gained > lost else "loss" if lost > gained else "no change seen"})
    names = ", ".join(f"`{f.name}`" for f in args.rows)
    lines = [f"# Claim checks, ablated on {names} ({len(rows)} questions)", "",
             f"Command: `python evals/claims_ablation.py --rows {' '.join(map(str, args.rows))}`", "",
             "Each check's answers with the sentences it removed put back, scored as evals/genre.py scores them.",
             "", "| check | answers it changed | wrong or out-of-scope stopped | right lost | moves | verdict |",
             "|---|---|---|---|---|---|"]
    for t in table:
        moves = "; ".join(f"{m}: {n}" for m, n in sorted(t["moves"].items())) or "–"
        lines.append(f"| `{t['check']}` | {t['changed']} | {t['wrong_or_out_of_scope_stopped']} | {t['right_lost']} "
                     f"| {moves} | {t['verdict']} |")
    write_result(args.name, {"rows": [str(f) for f in args.rows], "checks": table}, "\n".join(lines) + "\n")
    print(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
