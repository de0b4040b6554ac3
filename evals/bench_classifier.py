"""Accuracy and speed of the cheap/complex classifier on the labelled question sets.

    .venv/bin/python evals/bench_classifier.py

evals/data/route_questions.jsonl (60, paraphrased from FinanceBench development questions plus
follow-ups and small talk; the rules were written against it) and
evals/data/route_questions_holdout.jsonl (20, other companies and phrasings, scored once).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import load_jsonl, write_result
from providers.classifier import explain

DATA = Path(__file__).parent / "data"


def main() -> int:
    payload: dict = {"sets": {}}
    lines = ["| set | questions | accuracy | complex recall | cheap recall | µs per question |",
             "|---|---|---|---|---|---|"]
    for name in ("route_questions", "route_questions_holdout"):
        rows = load_jsonl(DATA / f"{name}.jsonl")
        started = time.perf_counter()
        predicted = [explain(row["q"]) for row in rows]
        micros = (time.perf_counter() - started) / len(rows) * 1e6
        correct = [p[0] == r["label"] for p, r in zip(predicted, rows, strict=True)]

        def recall(label: str, rows: list[dict] = rows, correct: list[bool] = correct) -> float:
            hits = [c for c, r in zip(correct, rows, strict=True) if r["label"] == label]
            return round(sum(hits) / len(hits), 3)

        result = {"questions": len(rows), "accuracy": round(sum(correct) / len(rows), 3),
                  "complex_recall": recall("complex"), "cheap_recall": recall("cheap"),
                  "us_per_question": round(micros, 1),
                  "errors": [{"q": r["q"], "label": r["label"], "signals": p[1]}
                             for p, r, c in zip(predicted, rows, correct, strict=True) if not c]}
        payload["sets"][name] = result
        lines.append(f"| {name} | {len(rows)} | {result['accuracy']} | {result['complex_recall']} | "
                     f"{result['cheap_recall']} | {result['us_per_question']} |")
    md = "\n".join(lines) + ("\n\nRules only, no model call. The first set was used to write the rules, so "
                             "its accuracy is optimistic; the hold-out set was written separately.\n")
    write_result("classifier", payload, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
