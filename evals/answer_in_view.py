"""Whether the excerpts the model is shown hold the answer, for the held-back genre questions, before any model call.

    THOTQEN_HOME=DIR [GRAPH_EXCERPT_CHARS=N] python evals/answer_in_view.py [--user genre] [--name answer_in_view]

For each answerable held-back genre question whose answer a text can hold word for word (figure, date, name,
explanation: evals/genre.py's `right` read on the shown excerpts' text instead of an answer), the graph runs up
to `compute` (no model call) and the excerpts generate would show are scored: the answer is in view when their
text scores right. Tallied by kind, with the characters shown and whether the question's document is among the
excerpts. A figure's accept ("3") may be found by chance in a longer view: an upper bound, for comparing views.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import load_jsonl, states_before_choose, write_result
from evals.genre import DATA, right

KINDS = ("figure", "date", "name", "explanation")


def main() -> int:
    from graph.nodes.generate import shown_excerpts

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--user", default="genre")
    p.add_argument("--name", default="answer_in_view")
    args = p.parse_args()
    questions = [q for f in sorted(DATA.glob("genre_holdout_*.jsonl")) if not f.stem.endswith("_oos")
                 for q in load_jsonl(f) if q["kind"] in KINDS]
    rows = []
    for q, state in zip(questions, states_before_choose([q["question"] for q in questions], args.user,
                                                         "answer_in_view"), strict=True):
        shown, _ = shown_excerpts(state)
        text = "\n".join(str(e.get("text") or "") for e in shown)
        rows.append({"id": q["id"], "kind": q["kind"], "in_view": right(q, text), "chars": len(text),
                     "document_shown": q.get("document") in {e.get("name") for e in shown}})
    seen, total = Counter(r["kind"] for r in rows if r["in_view"]), Counter(r["kind"] for r in rows)
    chars = sorted(r["chars"] for r in rows)
    summary = {"excerpt_chars": os.environ.get("GRAPH_EXCERPT_CHARS", "default"),
               "in_view": sum(seen.values()), "questions": len(rows),
               "by_kind": {k: f"{seen[k]} of {total[k]}" for k in KINDS},
               "document_shown_answer_missed": sum(r["document_shown"] and not r["in_view"] for r in rows),
               "median_chars_shown": chars[len(chars) // 2] if chars else 0}
    lines = [f"Answer in view (excerpt budget {summary['excerpt_chars']}): **{summary['in_view']} of {len(rows)}** "
             f"held-back genre questions; by kind {summary['by_kind']}; the question's document shown but the "
             f"answer not: {summary['document_shown_answer_missed']}; median characters shown "
             f"{summary['median_chars_shown']}.", "", "| id | kind | in view | characters | document shown |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['id']} | {r['kind']} | {r['in_view']} | {r['chars']} | {r['document_shown']} |" for r in rows
              if not r["in_view"]]
    print(lines[0])
    write_result(args.name, {**summary, "rows": rows}, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
