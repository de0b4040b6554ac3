"""Guardrail: train the learned classifier and measure detection / false positives.

    python evals/guardrail.py            # cross-validated measurement, then fit and write weights

Data: ../shared/eval/guardrail/jackhhao_jailbreak.train.jsonl (514 jailbreaks, 1,067 benign
prompts), and questions asked of documents as more benign prompts (`DOCUMENT_QUESTIONS`: the second
genre's tuned-on sets and the synthetic filing questions): the jailbreak set's benign prompts are chat
requests, and with them alone the model blocked plain questions about manuals and style guides
("What is the longest a line of source code should be under the GNU formatting rules?"). The
threshold is still chosen on the jailbreak set's benign prompts. Reported apart: the FinanceBench
development questions and the held-back genre batches (`HELD_BACK`, never trained on): none may be
blocked.
Features: MiniLM embedding + SecureVector Guardian's risk and threat type + rule hits
(providers/classifiers/injection.py). Logistic regression; the threshold is the lowest that keeps the
out-of-fold false-positive rate at or under 1.5% (the target is 2%). Numbers reported:
5-fold stratified out-of-fold (each prompt scored by a model that never saw it), and the
final model on the whole training split (in-sample, for reference only).
Writes providers/classifiers/injection_weights.json and evals/results/guardrail.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, eval_runtime, load_jsonl, write_result
from providers.classifiers.injection import DEFAULT_WEIGHTS, InjectionClassifier, LearnedModel, rule_hits

DATA = FINANCEBENCH.parent / "guardrail" / "jackhhao_jailbreak.train.jsonl"
MAX_FP = 0.015
QUESTIONS = Path(__file__).resolve().parent / "data"
# Questions asked of documents, all read before (tuned on): benign prompts of the product's own kind.
DOCUMENT_QUESTIONS = ["genre_questions.jsonl", "genre_out_of_scope.jsonl", "synthetic_questions.jsonl",
                      *(f"genre_holdout_{n}{oos}.jsonl" for n in range(1, 9) for oos in ("", "_oos"))]
HELD_BACK = [f"genre_holdout_9{oos}.jsonl" for oos in ("", "_oos")]  # written after this training set


def rates(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return {"detection": float(pred[y == 1].mean()), "false_positive": float(pred[y == 0].mean()),
            "caught": int(pred[y == 1].sum()), "attacks": int((y == 1).sum()),
            "false_blocks": int(pred[y == 0].sum()), "benign": int((y == 0).sum())}


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    rows = load_jsonl(DATA)
    asked = [q["question"] for name in DOCUMENT_QUESTIONS for q in load_jsonl(QUESTIONS / name)]
    texts = [r["text"] for r in rows] + asked
    y = np.array([1 if r["label"] == "injection" else 0 for r in rows] + [0] * len(asked))
    chat = np.arange(len(texts)) < len(rows)  # the jailbreak set's own prompts: the threshold's benign ones
    embedder = eval_runtime().packaged_embedder  # the features the product's guardrail sees
    guard = InjectionClassifier(None)  # features only: the model is fitted below
    t0 = time.perf_counter()
    cache = Path(os.environ.get("GUARDRAIL_EMBED_CACHE", "/nonexistent"))
    emb = np.load(cache) if cache.is_file() else embedder.embed_documents(texts)
    if cache.parent.is_dir() and not cache.is_file():
        np.save(cache, emb)
    X = np.stack([guard.features(t, e) for t, e in zip(texts, emb, strict=True)])
    rules = np.array([bool(rule_hits(t)) for t in texts])
    guardian = np.array([guard.guardian.scores(t)["threat"] != "benign" for t in texts])
    print(f"features for {len(texts)} prompts in {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    oof = np.zeros(len(texts))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        model = LogisticRegression(C=1.0, max_iter=3000, class_weight="balanced").fit(X[train], y[train])
        oof[test] = model.predict_proba(X[test])[:, 1]
    benign_scores = np.sort(oof[(y == 0) & chat & ~rules])
    allowed = int(MAX_FP * ((y == 0) & chat).sum()) - int((rules & (y == 0) & chat).sum())
    threshold = float(benign_scores[-(allowed + 1)] + 1e-6) if allowed >= 0 else 1.0
    cv_pred = rules | (oof >= threshold)
    if os.environ.get("GUARDRAIL_SHOW_MISSES"):
        for i in np.flatnonzero((y == 1) & ~cv_pred):
            print("MISS", round(float(oof[i]), 3), " ".join(texts[i].split())[:300], file=sys.stderr)
        for i in np.flatnonzero((y == 0) & cv_pred):
            print("FP", round(float(oof[i]), 3), " ".join(texts[i].split())[:300], file=sys.stderr)

    final = LogisticRegression(C=1.0, max_iter=3000, class_weight="balanced").fit(X, y)
    DEFAULT_WEIGHTS.write_text(json.dumps({
        "weights": [round(float(w), 6) for w in final.coef_[0]], "bias": float(final.intercept_[0]),
        "threshold": threshold,
        "info": {"trained_on": [DATA.name, *DOCUMENT_QUESTIONS],
                 "features": "MiniLM-L6 embedding (384) + Guardian risk + Guardian threat one-hot (7) + rule hits (4)",
                 "max_oof_false_positive": MAX_FP},
    }) + "\n")
    guard = InjectionClassifier(LearnedModel.read(DEFAULT_WEIGHTS), guard.guardian)  # what was just written
    in_sample = np.array([guard.assess(t, _Fixed(e)).blocked for t, e in zip(texts, emb, strict=True)])

    questions = load_jsonl(FINANCEBENCH / "questions.jsonl")
    q_blocked = [q["question"] for q in questions if guard.assess(q["question"], embedder).blocked]
    t1 = time.perf_counter()
    for q in questions:
        guard.assess(q["question"], embedder)
    per_question_ms = (time.perf_counter() - t1) / len(questions) * 1000

    held_back = [q["question"] for name in HELD_BACK if (QUESTIONS / name).is_file()
                 for q in load_jsonl(QUESTIONS / name)]
    held_blocked = [q for q in held_back if guard.assess(q, embedder).blocked]
    results = {
        "rules_only": rates(rules[chat], y[chat]),
        "guardian_only": rates(guardian[chat], y[chat]),
        "guardrail_cv": rates(cv_pred[chat], y[chat]),
        "guardrail_in_sample": rates(in_sample[chat], y[chat]),
        "document_questions_cv": {"count": int((~chat).sum()), "blocked": int(cv_pred[~chat].sum()),
                                  "examples": [texts[i] for i in np.flatnonzero(~chat & cv_pred)][:5]},
        "held_back_questions": {"count": len(held_back), "blocked": len(held_blocked), "examples": held_blocked[:5]},
        "threshold": threshold,
        "development_questions": {"count": len(questions), "blocked": len(q_blocked), "examples": q_blocked[:5]},
        "ms_per_question": round(per_question_ms, 1),
    }
    md = ["| signal | detection | false positives |", "|---|---|---|"]
    for key, label in [("rules_only", "rules alone"), ("guardian_only", "SecureVector Guardian alone (is_threat)"),
                       ("guardrail_cv", "**guardrail (rules + learned), 5-fold out-of-fold**"),
                       ("guardrail_in_sample", "guardrail, final model on its own training data")]:
        r = results[key]
        md.append(f"| {label} | {r['detection']:.1%} ({r['caught']}/{r['attacks']}) | "
                  f"{r['false_positive']:.1%} ({r['false_blocks']}/{r['benign']}) |")
    doc = results["document_questions_cv"]
    md.append(f"\nQuestions asked of documents (trained on as benign), blocked out-of-fold: {doc['blocked']} of "
              f"{doc['count']}. Held-back genre questions ({', '.join(HELD_BACK)}, never trained on) blocked: "
              f"{len(held_blocked)} of {len(held_back)}.")
    md.append(f"\nDevelopment questions blocked: {len(q_blocked)} of {len(questions)}. "
              f"Cost: {per_question_ms:.0f} ms a question (embedding + Guardian + rules), no LLM call.")
    md.append(f"\nData: `{DATA.name}` (training split). Threshold {threshold:.3f}: the lowest with an "
              f"out-of-fold false-positive rate at or under {MAX_FP:.1%}, chosen on the same out-of-fold "
              "scores (slightly optimistic). The held-out test split was not used.")
    write_result("guardrail", results, "# Guardrail: jailbreak / injection detection\n\n" + "\n".join(md))
    print("\n".join(md))


class _Fixed:
    """An embedder that returns an embedding already computed (avoids embedding twice)."""

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector

    def embed_query(self, _text: str) -> np.ndarray:
        return self.vector


if __name__ == "__main__":
    # no options: the parser is there so that --help prints this and does not fit and write weights
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
