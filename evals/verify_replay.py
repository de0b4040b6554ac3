"""The whole check between the model and the user (graph/nodes/verify.py `check`) run again on earlier genre
runs' drafts, on today's code, before a model run.

    THOTQEN_HOME=DIR python evals/verify_replay.py [--user genre] [--rows ROWS.jsonl ...] [--states CACHE.pkl]
        [--without CHECK ...] [--name verify_replay_NAME]

For each row the model drafted (evals/genre.py's rows: `verification.original`, the draft as generate finished
it), the graph runs up to `compute` on today's code and documents (no model call), the draft is put in the
state with the excerpts it would be shown as its citations, and verify's `check` decides what the user reads.
Tallied by how the draft scores against how the checked answer scores: a right draft refused or made wrong
is a right answer the check costs; a wrong or out-of-scope draft refused is one it saves. Unlike
evals/claims_replay.py (one claim check's strikes), this runs every part of the check: names the sources
never mention, unsupported sentences, bare figures, the claim and answer checks, the figures' check.

The excerpts are today's, the drafts were written beside their own commit's: a [n] may now cite other text,
so this is a screen, not a measurement. `--states` keeps each question's state between screens (a pickle,
read when it exists, else written; delete it when retrieval or the documents change). `--without` leaves
claim checks out (graph/claims.py CHECKS and ANSWER_CHECKS, by name): the whole check's ablation, one check at a
time, on today's drafts and code.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.claims_ablation import outcome
from evals.common import RESULTS, graph_run, load_jsonl, states_before_choose, write_result
from evals.genre import DATA

# the rows of each held-back batch's run that the held-back figures count (evals/results/README.md)
ROWS = ("genre_holdout_1", "genre_holdout_2", "genre_holdout_3", "genre_holdout_4_after", "genre_holdout_5_after",
        "genre_holdout_6_after", "genre_holdout_7_after", "genre_holdout_8_kept", "genre_holdout_9_after",
        "genre_holdout_10_after", "genre_holdout_11", "genre_holdout_12", "genre_holdout_13", "genre_holdout_14",
        "genre_holdout_15", "genre_holdout_16", "genre_holdout_17", "genre_holdout_18", "genre_holdout_19",
        "genre_holdout_20", "genre_holdout_21", "genre_holdout_22",
        "genre_holdout_23", "genre_holdout_24", "genre_holdout_25", "genre_holdout_26",
        "genre_holdout_27", "genre_holdout_28")


def checker(run: tuple[Any, Any]) -> Callable[[dict[str, Any], str], str]:
    """A function giving what verify's check lets through of a draft put in a state (its shown excerpts cited)."""
    from langgraph.runtime import Runtime

    from graph.citations import citations_of
    from graph.nodes.generate import shown_excerpts
    from graph.nodes.verify import check

    config, context = run

    def checked(state: dict[str, Any], draft: str) -> str:
        citations = citations_of(shown_excerpts(state)[0])
        return check({**state, "answer": draft, "citations": citations}, config, Runtime(context=context)).answer

    return checked


def leave_out(names: set[str]) -> None:
    """The claim checks named left out of every check this process runs."""
    from graph import claims

    known = {c.name for c in claims.CHECKS} | {c.name for c in claims.ANSWER_CHECKS}
    if names - known:
        raise SystemExit(f"no such claim check: {', '.join(sorted(names - known))} (known: {', '.join(sorted(known))})")
    claims.ANSWER_CHECKS = tuple(c for c in claims.ANSWER_CHECKS if c.name not in names)
    claims.CHECKS = tuple(c for c in claims.CHECKS if c.name not in names)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--user", default="genre")
    p.add_argument("--rows", type=Path, nargs="+", default=[RESULTS / f"{name}.rows.jsonl" for name in ROWS])
    p.add_argument("--states", type=Path, help="a pickle keeping each question's state between screens")
    p.add_argument("--without", nargs="*", default=[], help="claim checks left out, by name (graph/claims.py)")
    p.add_argument("--name", default="verify_replay")
    args = p.parse_args()
    if args.without:
        leave_out(set(args.without))
    questions = {q["id"]: q for f in sorted(DATA.glob("genre_*.jsonl")) for q in load_jsonl(f)}
    rows = [r for f in args.rows for r in load_jsonl(f)
            if r.get("id") in questions and (r.get("verification") or {}).get("original")]
    kept: dict[str, dict[str, Any]] = {}
    if args.states and args.states.exists():
        kept = pickle.loads(args.states.read_bytes())
    asked = [q for q in dict.fromkeys(r["question"] for r in rows) if q not in kept]
    run = graph_run(args.user, "verify_replay")
    kept |= dict(zip(asked, states_before_choose(asked, args.user, "verify_replay", run=run), strict=True))
    checked = checker(run)
    if args.states:
        args.states.write_bytes(pickle.dumps(kept))
    moves: Counter[tuple[str, str]] = Counter()
    table = []
    for row in rows:
        question = questions[row["id"]]
        draft = row["verification"]["original"]
        now = checked(kept[row["question"]], draft)
        before, after = outcome(question, draft), outcome(question, now)
        moves[(before, after)] += 1
        as_run = outcome(question, row["answer"])
        table.append({"id": row["id"], "draft": before, "as_run": as_run, "now": after, "answer": now})
    lines = ["| draft scored | checked now | drafts |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {n} |" for (a, b), n in sorted(moves.items())]
    lines += ["", "| id | draft | as run | now | answer now |", "|---|---|---|---|---|"]
    lines += [f"| {t['id']} | {t['draft']} | {t['as_run']} | {t['now']} | {t['answer'][:160].replace('|', '/')} |"
              for t in table if t["as_run"] != t["now"] or t["draft"] != t["now"]]
    summary = {f"{a} -> {b}": n for (a, b), n in sorted(moves.items())}
    print("\n".join(f"{k}: {v}" for k, v in summary.items()))
    write_result(args.name, {"moves": summary, "rows": table}, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
