"""Does the guardrail's learned classifier decide the same with another embedding backend?

    python evals/guardrail_backends.py [--every 4] [--backends torch,onnx-int8]

The classifier (providers/classifiers/injection.py) was fitted on PyTorch MiniLM query embeddings plus the
Guardian's scores and rule hits. This scores every --every-th prompt of the jailbreak training
split and all development questions with each backend's embeddings (the Guardian part computed
once per prompt) and reports, per backend, how many decisions differ from PyTorch's and the
detection / false-positive rates at the shipped threshold.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, eval_runtime, load_jsonl, write_result  # noqa: E402

DATA = FINANCEBENCH.parent / "guardrail" / "jackhhao_jailbreak.train.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--backends", default="torch,onnx-int8")
    args = parser.parse_args()

    from providers.embeddings import build_embedder

    runtime = eval_runtime()
    guard = runtime.guard
    model = guard.model
    if model is None:
        print("no learned guardrail weights shipped", file=sys.stderr)
        return 1
    rows = load_jsonl(DATA)[:: args.every]
    prompts = [(r["text"], r["label"] == "injection") for r in rows]
    prompts += [(q["question"], False) for q in load_jsonl(FINANCEBENCH / "questions.jsonl")]
    dim = 384
    extras = [guard.features(text, np.zeros(dim, dtype=np.float32))[dim:] for text, _ in prompts]
    flagged: dict[str, np.ndarray] = {}
    probs: dict[str, np.ndarray] = {}
    for name in args.backends.split(","):
        embedder = build_embedder(name, export_root=runtime.settings.embedding_export_root)  # each on purpose
        p = np.array([model.probability(np.concatenate([embedder.embed_query(text), extra]))
                      for (text, _), extra in zip(prompts, extras, strict=True)])
        probs[name] = p
        flagged[name] = p >= model.threshold
        print(f"{name}: done", file=sys.stderr)
    truth = np.array([bad for _, bad in prompts])
    ref = args.backends.split(",")[0]
    summary = {}
    for name, f in flagged.items():
        summary[name] = {
            "detected": round(float(f[truth].mean()), 3), "false_positive": round(float(f[~truth].mean()), 3),
            "decisions_differing_from_" + ref: int((f != flagged[ref]).sum()),
            "max_probability_shift": round(float(np.abs(probs[name] - probs[ref]).max()), 3),
        }
    lines = ["| backend | jailbreaks flagged | benign flagged | decisions differing from " + ref
             + " | largest probability shift |", "|---|---|---|---|---|"]
    for name, s in summary.items():
        lines.append(f"| {name} | {s['detected']:.1%} | {s['false_positive']:.1%} | "
                     f"{s['decisions_differing_from_' + ref]} of {len(prompts)} | {s['max_probability_shift']} |")
    md = "\n".join(lines) + (
        f"\n\n{len(prompts)} prompts: every {args.every}th of the jailbreak training split ({int(truth.sum())} "
        f"jailbreaks) and the {len(prompts) - len(rows)} development questions; the shipped classifier and "
        f"threshold ({model.threshold:.3f}), fitted on PyTorch embeddings. In-sample for the training prompts: "
        "this measures agreement between backends, not the guardrail's accuracy (evals/results/guardrail.md).\n")
    write_result("guardrail_backends", {"prompts": len(prompts), "threshold": model.threshold,
                                        "backends": summary}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
