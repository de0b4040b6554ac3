"""Grading prompts compared on the local model: a reason per excerpt, or a bare yes/no, with the
schema spelled out in the prompt (the product) or only its field names (the grammar already
holds the schema on this server, so the schema text looks redundant), or a quote per excerpt that
counts as "yes" only when the words are really in that excerpt (a verdict the model cannot just
assert).

    python evals/bench_grading.py [--rows evals/results/graph_full.json] [--stride 3] [--only verdict,quote]

Reads the excerpts the graph showed for each development question (the rows of a
`bench_graph.py` result), grades them with each variant through the local model's own
OpenAI-style endpoint and the same grammar-constrained schema the grade node sends, and scores
the verdicts against FinanceBench's evidence pages (an excerpt from an evidence page should be
"yes"; any other page "no", which is stricter than relevance, since a figure can sit on two
pages). Every call starts with an empty prompt cache (`cache_prompt: false`) so both variants
pay for the whole prompt. Writes evals/results/grading.{json,md} (or --name).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import RESULTS, eval_runtime, write_result


class Reasoned(BaseModel):
    reason: str = Field(max_length=80)
    relevant: Literal["yes", "no"]


class Quoted(BaseModel):
    quote: str = Field(max_length=80)


QUOTE_TASK = (
    "For EVERY excerpt above, copy the words of that excerpt that help answer the question (a "
    "figure with its line item, or a statement), or write none if it holds nothing the answer needs."
)


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def quote_holds(value: Any, excerpt: str) -> bool:
    """An excerpt counts as relevant when the grader copied words that really are in it."""
    quote = _alnum(value["quote"] if isinstance(value, dict) else str(value))
    return len(quote) >= 4 and quote != "none" and quote in _alnum(excerpt)


REASONED_TASK = (
    "For EVERY excerpt above, decide whether it contains information that helps answer the "
    "question (a figure, line item or statement the answer needs). For each excerpt give a short "
    "reason first, then yes or no."
)


def variants() -> dict[str, tuple[Any, str, bool]]:
    """name -> (schema for a count of excerpts, task, whether the prompt names only the fields)"""
    from graph import prompts
    from graph.grading import verdicts_model

    def reasoned(count: int) -> type[BaseModel]:
        return create_model(f"Reasoned{count}", **{f"excerpt_{n}": (Reasoned, ...) for n in range(1, count + 1)})

    def quoted(count: int) -> type[BaseModel]:
        return create_model(f"Quoted{count}", **{f"excerpt_{n}": (Quoted, ...) for n in range(1, count + 1)})

    return {"quote, checked against the excerpt": (quoted, QUOTE_TASK, False),
            "reason_then_verdict": (reasoned, REASONED_TASK, False),
            "verdict_only, schema in prompt (product)": (verdicts_model, prompts.GRADE_TASK, False),
            "verdict_only, field names only": (verdicts_model, prompts.GRADE_TASK, True)}


def fields_only(model: type[BaseModel]) -> str:
    """The instruction without the schema text (~130 fewer prompt tokens for four verdicts)."""
    return f"Reply with one JSON object with the fields {', '.join(model.model_fields)}."


def grading_messages(excerpts: list[dict[str, Any]], question: str, task: str, model: type[BaseModel],
                     enforced: bool = False) -> list[dict[str, str]]:
    """The grade node's messages (graph/nodes/grade.py) for `excerpts`, with `task` as the instruction;
    `enforced`: the schema named by its fields only."""
    from graph import prompts
    from providers.llm.structured import instruction

    return [{"role": "system", "content": prompts.EXCERPTS_SYSTEM},
            {"role": "user", "content": prompts.excerpt_block(excerpts, question) + task
             + "\n\n" + (fields_only(model) if enforced else instruction(model))}]


@dataclass(frozen=True)
class Graded:
    """One grading call's reply: a verdict per excerpt, in order (None: the reply is not the schema)."""

    verdicts: list[bool] | None
    reply: str
    timings: dict[str, Any]  # the server's own (prompt_n, predicted_n)
    elapsed: float
    p_yes: dict[int, float] = field(default_factory=dict)  # with logprobs: excerpt number -> P(yes)


def grade_once(server: Any, messages: list[dict[str, str]], model: type[BaseModel],
               texts: list[str], *, logprobs: bool = False, cache_prompt: bool = False) -> Graded:
    """`messages` sent to the local model's endpoint under `model`'s grammar. `logprobs`: each token's
    log-probabilities too, read into each excerpt's P(yes) as the grade node reads them; `cache_prompt`
    False makes every call pay for its whole prompt (comparing prompts of different lengths)."""
    from graph.grading import yes_probabilities
    from providers.llm.chain import TOP_LOGPROBS
    from providers.llm.structured import response_format

    body: dict[str, Any] = {"model": "local", "messages": messages, "max_tokens": 400, "temperature": 0,
                            "cache_prompt": cache_prompt, "response_format": response_format(model)}
    if logprobs:
        body |= {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
    request = urllib.request.Request(f"{server.base_url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {server.api_key}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        out = json.load(response)
    elapsed = time.perf_counter() - started
    choice = out["choices"][0]
    reply = choice["message"].get("content") or ""
    verdicts: list[bool] | None
    try:
        parsed = json.loads(reply)
        verdicts = [quote_holds(v, t) if isinstance(v, dict) and "quote" in v
                    else (v if isinstance(v, str) else v["relevant"]) == "yes"
                    for v, t in zip(parsed.values(), texts, strict=False)]
    except (ValueError, KeyError, TypeError, AttributeError):
        verdicts = None
    p_yes = yes_probabilities((choice.get("logprobs") or {}).get("content") or []) if logprobs else {}
    return Graded(verdicts, reply, out.get("timings") or {}, elapsed, p_yes)


def tally(pairs: list[tuple[bool, bool]]) -> dict[str, Any]:
    """(is evidence, kept) pairs counted: accuracy, balanced accuracy (the mean of evidence kept and
    other pages dropped), and each of the four cells."""
    kept = sum(1 for label, v in pairs if label and v)
    evidence = sum(1 for label, _ in pairs if label)
    dropped_other = sum(1 for label, v in pairs if not label and not v)
    other = len(pairs) - evidence
    tpr, tnr = (kept / evidence if evidence else 0.0), (dropped_other / other if other else 0.0)
    return {"excerpts": len(pairs), "accuracy": round(sum(label == v for label, v in pairs) / len(pairs), 3)
            if pairs else None, "balanced": round((tpr + tnr) / 2, 3), "evidence_kept": kept,
            "evidence_dropped": evidence - kept, "other_kept": other - dropped_other, "other_dropped": dropped_other}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=str(RESULTS / "graph_full.json"), help="a bench_graph.py result")
    parser.add_argument("--stride", type=int, default=3, help="every Nth question")
    parser.add_argument("--only", default="",
                        help="only the variants whose names start with one of these (comma-separated)")
    parser.add_argument("--name", default="grading", help="result file name under evals/results/")
    args = parser.parse_args()
    server = eval_runtime().local_model()
    rows = json.loads(Path(args.rows).read_text())["rows"][:: args.stride]
    source = Path(args.rows).resolve().relative_to(Path.cwd()) if Path(args.rows).resolve().is_relative_to(
        Path.cwd()) else Path(args.rows)
    prefixes = tuple(args.only.split(","))
    chosen = {name: v for name, v in variants().items() if name.startswith(prefixes)}
    results: dict[str, list[dict]] = {name: [] for name in chosen}
    for row in rows:
        excerpts = [{"name": c["name"], "page": c["page"], "text": c["text"]} for c in row["citations"]]
        labels = [c["page"] in row["evidence_pages"] for c in row["citations"]]
        for name, (make, task, enforced) in chosen.items():
            model = make(len(excerpts))
            messages = grading_messages(excerpts, row["question"], task, model, enforced)
            graded = grade_once(server, messages, model, [e["text"] for e in excerpts])
            results[name].append({"id": row["id"], "labels": labels, "verdicts": graded.verdicts,
                                  "s": round(graded.elapsed, 2), "prompt_tokens": graded.timings.get("prompt_n"),
                                  "output_tokens": graded.timings.get("predicted_n"), "reply": graded.reply})
            print(name, row["id"], labels, graded.verdicts, f"{graded.elapsed:.1f}s", file=sys.stderr)
    summary = {}
    for name, graded in results.items():
        pairs = [(label, v) for g in graded if g["verdicts"] and len(g["verdicts"]) == len(g["labels"])
                 for label, v in zip(g["labels"], g["verdicts"], strict=True)]
        summary[name] = {
            "questions": len(graded), **tally(pairs),
            "invalid": sum(1 for g in graded if not g["verdicts"] or len(g["verdicts"]) != len(g["labels"])),
            "p50_s": round(statistics.median(g["s"] for g in graded), 2),
            "p50_output_tokens": statistics.median(g["output_tokens"] or 0 for g in graded),
            "p50_prompt_tokens": statistics.median(g["prompt_tokens"] or 0 for g in graded),
        }
    md = ["# Grading prompts on the local model", "",
          f"{len(rows)} development questions (one row in {args.stride} of `{source}`), the excerpts the graph "
          "showed for each, graded with an empty prompt cache. A verdict is scored right when it says yes "
          "exactly for excerpts from an evidence page.", "",
          "| variant | accuracy | evidence kept | evidence dropped | other pages kept | other pages dropped "
          "| p50 s | p50 prompt tokens | p50 generated tokens | invalid |", "|---|---|---|---|---|---|---|---|---|---|"]
    md += [f"| {n} | {s['accuracy']} | {s['evidence_kept']} | {s['evidence_dropped']} | {s['other_kept']} | "
           f"{s['other_dropped']} | {s['p50_s']} | {s['p50_prompt_tokens']} | {s['p50_output_tokens']} | "
           f"{s['invalid']} |"
           for n, s in summary.items()]
    write_result(args.name, {"rows": args.rows, "stride": args.stride, "summary": summary, "results": results},
                 "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
