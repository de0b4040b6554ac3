"""Chunk screening: train the sentence classifier and measure it on BIPIA and on real filings.

    python evals/screen.py            # train, write the weights, measure
    python evals/screen.py --measure  # measure the screen node as shipped (no training)

Data: ../shared/eval/guardrail/bipia.train.jsonl (400 clean contexts and the same 400 with one
attack string inserted) and the FinanceBench filings (clean text the product must not damage).
Positives are the attack strings; negatives are the sentences of clean BIPIA contexts and of
half the filings. Measured out-of-fold: 5 folds by attack string (a poisoned context is scored
by a model that never saw its attack) and by clean context; filings: the other half of the
filings, never trained on, cut into excerpt-sized windows like the graph's.
A context is "caught" when at least one sentence is flagged (the node cuts flagged sentences
out); "dropped" when flagged text is over half of it (the node drops the whole excerpt).
Writes providers/classifiers/instruction_weights.json and evals/results/screen.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, write_result
from graph import screening as sc
from providers.classifiers.instruction import (
    DEFAULT_WEIGHTS,
    DIM,
    InstructionClassifier,
    SentenceModel,
    rule_hit,
    vector,
)

DATA = FINANCEBENCH.parent / "guardrail" / "bipia.train.jsonl"
FOLDS = 5
MAX_CLEAN_ALTERED = 0.05  # BIPIA clean contexts with any sentence cut (out-of-fold)
MAX_FILING_ALTERED = 0.01  # filing excerpts with any sentence cut (training filings)


def base_key(row: dict) -> str:
    text = row["text"].replace(row.get("attack_str") or "\0", "")
    return " ".join(text.split())[:300]


def filing_windows(names: list[str], per_file: int, rng: random.Random) -> list[str]:
    import pymupdf

    out = []
    for name in names:
        doc = pymupdf.open(FINANCEBENCH / "pdfs" / f"{name}.pdf")
        pages = [doc[i].get_text() for i in range(len(doc))]
        doc.close()
        text = "\n".join(pages)
        for _ in range(per_file):
            start = rng.randrange(0, max(1, len(text) - 1200))
            out.append(text[start : start + 1200])
    return out


def matrix(sentences: list[str]):  # scipy sparse matrix
    from scipy.sparse import csr_matrix

    rows, cols, vals = [], [], []
    for i, s in enumerate(sentences):
        for h, v in vector(s).items():
            rows.append(i)
            cols.append(h)
            vals.append(v)
    return csr_matrix((vals, (rows, cols)), shape=(len(sentences), DIM))


def fit(pos: list[str], neg: list[str]) -> SentenceModel:
    from sklearn.linear_model import LogisticRegression

    X = matrix(pos + neg)
    y = np.array([1] * len(pos) + [0] * len(neg))
    lr = LogisticRegression(C=4.0, max_iter=5000, class_weight="balanced").fit(X, y)
    coef = lr.coef_[0]
    # weights under 0.05 are pruned (a tenth of the size, ~120 KB); what is measured is what ships
    weights = {int(i): round(float(coef[i]), 3) for i in np.flatnonzero(np.abs(coef) > 0.05)}
    return SentenceModel(weights, float(lr.intercept_[0]), 0.5)


def context_score(text: str, model: SentenceModel) -> float:
    """The highest sentence probability, or 1.0 when a rule fires (rules always cut)."""
    best = 0.0
    for s in sc.sentences(text):
        if rule_hit(s):
            return 1.0
        best = max(best, model.probability(s))
    return best


def node_view(text: str, model: SentenceModel | None) -> str | None:
    """What the screen node shows the model of an excerpt; None when it drops it."""
    return sc.screen_excerpt(text, InstructionClassifier(model))[0]


def dropped(text: str, model: SentenceModel) -> bool:
    return node_view(text, model) is None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def measure(name: str = "screen_node") -> None:
    """The node as shipped (weights in providers/classifiers): on BIPIA's poisoned contexts, how often the attack
    is gone from what the model sees (detected: its text removed, or the excerpt dropped) and how much
    of the real text stays; on clean contexts and held-out filings, how often text is altered or lost."""
    rows = load_jsonl(DATA)
    model = InstructionClassifier.load().model
    poisoned = [r for r in rows if r["label"] == "injection"]
    clean = [r for r in rows if r["label"] == "benign"]
    neutralised = dropped_p = 0
    kept_share = []
    for r in poisoned:
        view = node_view(r["text"], model)
        attack = " ".join(_words(r["attack_str"]))
        if view is None:
            neutralised += 1
            dropped_p += 1
            kept_share.append(0.0)
            continue
        if attack not in " ".join(_words(view.replace(sc.MARKER, " "))):
            neutralised += 1
        real = _words(r["text"].replace(r["attack_str"], " "))
        seen = set(_words(view.replace(sc.MARKER, " ")))
        kept_share.append(sum(w in seen for w in real) / max(1, len(real)))
    altered = sum(node_view(r["text"], model) != r["text"] for r in clean)
    dropped_c = sum(node_view(r["text"], model) is None for r in clean)
    rng = random.Random(0)
    docs = sorted({r["doc_name"] for r in load_jsonl(FINANCEBENCH / "documents.jsonl")})
    docs = [d for d in docs if (FINANCEBENCH / "pdfs" / f"{d}.pdf").is_file()]
    held = filing_windows(docs[1::2], 60, rng)
    held_views = [node_view(w, model) for w in held]
    results = {
        "bipia_poisoned": len(poisoned), "attack_gone": neutralised / len(poisoned),
        "poisoned_dropped": dropped_p, "real_words_kept": float(np.mean(kept_share)),
        "bipia_clean": len(clean), "clean_altered": altered / len(clean), "clean_dropped": dropped_c,
        "filing_windows": len(held), "filings_altered": sum(v != w for v, w in zip(held_views, held, strict=True))
        / len(held), "filings_dropped": sum(v is None for v in held_views),
    }
    md = ["| set | attack gone from the model's view | excerpts dropped | real words kept | text altered |",
          "|---|---|---|---|---|",
          f"| BIPIA poisoned ({len(poisoned)}, in-sample weights) | {results['attack_gone']:.1%} | {dropped_p} | "
          f"{results['real_words_kept']:.1%} | – |",
          f"| BIPIA clean ({len(clean)}) | – | {dropped_c} | – | {results['clean_altered']:.1%} |",
          f"| held-out filings ({len(held)} windows) | – | {results['filings_dropped']} | – | "
          f"{results['filings_altered']:.1%} |"]
    write_result(name, results, "# The screen node as shipped: attacks removed, facts kept\n\n" + "\n".join(md)
                 + "\n\nThe weights are the shipped ones, trained on these BIPIA contexts (in-sample): this "
                 "measures the node's cutting, not the classifier's generalisation (screen.md does that).")
    print("\n".join(md))


def main() -> None:
    rng = random.Random(0)
    rows = load_jsonl(DATA)
    docs = sorted({r["doc_name"] for r in load_jsonl(FINANCEBENCH / "documents.jsonl")})
    docs = [d for d in docs if (FINANCEBENCH / "pdfs" / f"{d}.pdf").is_file()]
    train_docs, held_docs = docs[0::2], docs[1::2]
    t0 = time.perf_counter()
    train_windows = filing_windows(train_docs, 60, rng)
    held_windows = filing_windows(held_docs, 60, rng)
    filing_neg = [s for w in train_windows for s in sc.sentences(w)]
    print(f"{len(filing_neg)} filing sentences in {time.perf_counter() - t0:.0f}s", file=sys.stderr)

    attacks = sorted({r["attack_str"] for r in rows if r["label"] == "injection"})
    rng.shuffle(attacks)
    attack_fold = {a: i % FOLDS for i, a in enumerate(attacks)}
    bases = sorted({base_key(r) for r in rows})
    rng.shuffle(bases)
    base_fold = {b: i % FOLDS for i, b in enumerate(bases)}
    clean = [r for r in rows if r["label"] == "benign"]
    poisoned = [r for r in rows if r["label"] == "injection"]

    oof_clean: dict[int, float] = {}
    oof_poison: dict[int, float] = {}
    oof_train_filings = np.zeros(len(train_windows))
    for f in range(FOLDS):
        pos = [a for a in attacks if attack_fold[a] != f]
        neg = [s for r in clean if base_fold[base_key(r)] != f for s in sc.sentences(r["text"])]
        model = fit(pos, neg + filing_neg)
        for i, r in enumerate(clean):
            if base_fold[base_key(r)] == f:
                oof_clean[i] = context_score(r["text"], model)
        for i, r in enumerate(poisoned):
            if attack_fold[r["attack_str"]] == f:
                oof_poison[i] = context_score(r["text"], model)
        # filings are negatives in every fold: score them in-sample per fold (they set the threshold)
        oof_train_filings += np.array([context_score(w, model) for w in train_windows]) / FOLDS

    clean_s = np.array([oof_clean[i] for i in range(len(clean))])
    poison_s = np.array([oof_poison[i] for i in range(len(poisoned))])
    candidates = np.unique(np.concatenate([clean_s, poison_s, oof_train_filings, [0.5, 0.99]]))
    threshold = 0.99
    for t in sorted(candidates):
        if t < 0.5:
            continue
        if (clean_s >= t).mean() <= MAX_CLEAN_ALTERED and (oof_train_filings >= t).mean() <= MAX_FILING_ALTERED:
            threshold = float(t)
            break

    final = fit(attacks, [s for r in clean for s in sc.sentences(r["text"])] + filing_neg)
    final.threshold = threshold
    DEFAULT_WEIGHTS.write_text(json.dumps({"weights": {str(k): v for k, v in final.weights.items()},
                                   "bias": final.bias, "threshold": threshold}) + "\n")
    held = np.array([context_score(w, final) for w in held_windows])
    held_dropped = sum(dropped(w, final) for w in held_windows)
    rules_only_poison = np.mean([any(rule_hit(s) for s in sc.sentences(r["text"])) for r in poisoned])
    rules_only_clean = np.mean([any(rule_hit(s) for s in sc.sentences(r["text"])) for r in clean])
    by_task = {}
    for task in sorted({r["task"] for r in rows}):
        idx_p = [i for i, r in enumerate(poisoned) if r["task"] == task]
        idx_c = [i for i, r in enumerate(clean) if r["task"] == task]
        by_task[task] = {"caught": float((poison_s[idx_p] >= threshold).mean()),
                         "clean_altered": float((clean_s[idx_c] >= threshold).mean()), "n": len(idx_p)}
    shipped = InstructionClassifier(final)
    t1 = time.perf_counter()
    for w in held_windows:
        sc.screen_text(w, shipped)
    ms = (time.perf_counter() - t1) / len(held_windows) * 1000

    results = {
        "threshold": threshold,
        "bipia_poisoned_caught_oof": float((poison_s >= threshold).mean()),
        "bipia_clean_altered_oof": float((clean_s >= threshold).mean()),
        "bipia_by_task_oof": by_task,
        "rules_only": {"poisoned_caught": float(rules_only_poison), "clean_altered": float(rules_only_clean)},
        "held_out_filings": {"files": len(held_docs), "windows": len(held_windows),
                             "altered": float((held >= threshold).mean()), "dropped": int(held_dropped)},
        "training_filings_altered_oof": float((oof_train_filings >= threshold).mean()),
        "ms_per_excerpt": round(ms, 2),
    }
    md = [
        "| set | caught (poisoned) | wrongly altered (clean) |", "|---|---|---|",
        f"| BIPIA, rules alone | {rules_only_poison:.1%} | {rules_only_clean:.1%} |",
        f"| **BIPIA, rules + classifier, out-of-fold** | **{results['bipia_poisoned_caught_oof']:.1%}** "
        f"({int((poison_s >= threshold).sum())}/{len(poisoned)}) | **{results['bipia_clean_altered_oof']:.1%}** "
        f"({int((clean_s >= threshold).sum())}/{len(clean)}) |",
    ]
    for task, r in by_task.items():
        md.append(f"| BIPIA {task} (out-of-fold) | {r['caught']:.1%} | {r['clean_altered']:.1%} |")
    md.append(f"| held-out filings ({len(held_docs)} files, {len(held_windows)} windows of 1,200 chars) | – | "
              f"{results['held_out_filings']['altered']:.1%} altered, {held_dropped} dropped |")
    md.append(f"\nThreshold {threshold:.3f}: the lowest (≥ 0.5) with at most {MAX_CLEAN_ALTERED:.0%} of clean BIPIA "
              f"contexts and {MAX_FILING_ALTERED:.0%} of training-filing windows altered (out-of-fold). "
              f"Cost: {ms:.1f} ms per excerpt, no model call. A flagged sentence (or line of one) is replaced by "
              "a marker; an excerpt is dropped only when nothing of substance is left. The held-out test split "
              "was not used.")
    write_result("screen", results, "# Chunk screening: injected instructions in retrieved text\n\n" + "\n".join(md))
    print("\n".join(md))


def cli(argv: list[str] | None = None) -> None:
    """Train (writing the shipped weights) unless --measure; --help trains nothing."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", action="store_true", help="measure the screen node as shipped, no training")
    parser.add_argument("--name", default="screen_node", help="the --measure result's name")
    args = parser.parse_args(argv)
    measure(args.name) if args.measure else main()


if __name__ == "__main__":
    cli()
