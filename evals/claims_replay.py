"""What a claim check (kept or a candidate) would strike in earlier genre runs' answers, before a model run.

    THOTQEN_HOME=DIR python evals/claims_replay.py --check NAME [NAME ...] [--user genre] [--rows ROWS.jsonl ...]
        [--drafts] [--excerpts CACHE.json] [--name claims_replay_NAME]

For each answered row of the runs (evals/genre.py's rows: the answer the user read), the graph runs up to
`compute` on today's code and documents (no model call) for the excerpts the answer would be checked
against, and the check `NAME` (a function of graph/claims.py taking (sentence, cited text, question), as the
registry's checks do) is applied to every sentence as `claims.failures` applies a registered one: a
sentence that fails, unless citing one or two more excerpts cures it, is struck. Tallied by how the answer
was scored (right, wrong, answered out of scope): a check earns a model run (and its held-back
measurement) only when it strikes more wrong or out-of-scope answers than right ones. The excerpts are
today's, the answers were written beside the excerpts of their own commit: a [n] may now cite other text,
so this is a screen, not the ablation (evals/claims_ablation.py reads what a run's checks did).

`--drafts`: the model's drafts instead (each row's `verification.original`, refused rows included, with talk of
excerpts taken out as graph/mechanics.py takes it), tallied by how the draft itself scores: what a kept check
strikes in right drafts is the right answers it costs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.claims_ablation import outcome
from evals.common import RESULTS, load_jsonl, states_before_choose, write_result
from evals.genre import DATA

ROWS = ("genre_after_reading", "genre_yesno_tuned_final", "genre_holdout_1", "genre_holdout_2", "genre_holdout_3",
        "genre_holdout_4_after", "genre_holdout_5_after", "genre_holdout_6_after", "genre_holdout_7_after",
        "genre_holdout_8_kept", "genre_holdout_9_after")


def excerpt_texts(questions: list[str], user: str) -> list[dict[int, str]]:
    """The excerpts the model would be shown for each question, by [n]: the graph run up to compute."""
    from graph.nodes.generate import shown_excerpts

    return [{n: str(e.get("text") or "") for n, e in enumerate(shown_excerpts(state)[0], 1)}
            for state in states_before_choose(questions, user, "claims_replay")]


def main() -> int:
    from graph import claims
    from graph.mechanics import without_mechanics

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", required=True, nargs="+",
                   help="functions of graph/claims.py: (sentence, cited, question), each tallied on its own")
    p.add_argument("--user", default="genre")
    p.add_argument("--rows", type=Path, nargs="+", default=[RESULTS / f"{name}.rows.jsonl" for name in ROWS])
    p.add_argument("--drafts", action="store_true", help="check the model's drafts, not the answers read")
    p.add_argument("--excerpts", type=Path, help="a JSON file keeping each question's excerpts between screens "
                                                 "(read when it exists, else written)")
    p.add_argument("--name")
    args = p.parse_args()
    questions = {q["id"]: q for f in sorted(DATA.glob("genre_*.jsonl")) for q in load_jsonl(f)}
    rows = [r for f in args.rows for r in load_jsonl(f) if r.get("id") in questions]
    if args.drafts:
        rows = [{**r, "answer": without_mechanics(r["verification"]["original"])} for r in rows
                if (r.get("verification") or {}).get("original")]
    else:
        rows = [r for r in rows if not r.get("refused") and r.get("answer")]
    kept = json.loads(args.excerpts.read_text()) if args.excerpts and args.excerpts.exists() else {}
    asked = [q for q in dict.fromkeys(r["question"] for r in rows) if q not in kept]
    kept |= {q: {str(n): t for n, t in texts.items()} for q, texts in zip(asked, excerpt_texts(asked, args.user),
                                                                         strict=True)}
    if args.excerpts:
        args.excerpts.write_text(json.dumps(kept))
    lines, payload = [], {}
    for name in args.check:
        summary, found = screen(claims.Check(name, "", getattr(claims, name)), rows, kept, questions)
        summary = ("In drafts: " if args.drafts else "") + summary
        payload[name] = {"summary": summary, "rows": found}
        lines += [summary + ".", "", "| id | scored | sentence struck |", "|---|---|---|"]
        lines += [f"| {r['id']} | {r['outcome']} | {' / '.join(r['struck'])[:200].replace('|', '/')} |"
                  for r in found if r["struck"]]
        lines.append("")
        print(summary)
    write_result(args.name or f"claims_replay_{'_'.join(args.check)}",
                 {"checks": payload, "drafts": args.drafts}, "\n".join(lines))
    return 0


def screen(check: Any, rows: list[dict], kept: dict[str, dict[str, str]],
           questions: dict[str, dict]) -> tuple[str, list[dict]]:
    """What `check` strikes in each row's answer (unless citing more cures it), tallied by how it scores."""
    from graph import claims
    from graph.verify import sentences

    found = []
    for row in rows:
        texts = {int(n): t for n, t in kept[row["question"]].items()}
        struck = [f for f in claims.failures(sentences(row["answer"]), row["answer"], texts, row["question"],
                                             checks=(check,)) if f.repair is None]
        found.append({"id": row["id"], "outcome": outcome(questions[row["id"]], row["answer"]),
                      "struck": [f.sentence.strip() for f in struck]})
    tally = {o: (sum(r["outcome"] == o for r in found), sum(bool(r["struck"]) and r["outcome"] == o for r in found))
             for o in ("right", "wrong", "answered out of scope")}
    return (f"`{check.name}` strikes a sentence of {tally['right'][1]} of {tally['right'][0]} right answers, "
            f"{tally['wrong'][1]} of {tally['wrong'][0]} wrong ones and {tally['answered out of scope'][1]} of "
            f"{tally['answered out of scope'][0]} answered out of scope"), found


if __name__ == "__main__":
    sys.exit(main())
