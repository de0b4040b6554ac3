"""evals/quality.py end to end as a subprocess: a tiny ingested PDF, the real graph, embedded Postgres,
the real embedder, and a scripted OpenAI-compatible model over HTTP that answers the graph, the judge and
RAGAS (every RAGAS prompt carries a JSON schema; the script replies with a valid instance of it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.fake_openai import FakeOpenAI, grades_json
from evals.pdfs import AURORA_TOPICS as TOPICS
from tests.support.cli_run import env_with_report
from tests.support.schema_replies import schema_reply

ROOT = Path(__file__).resolve().parents[2]

QUESTIONS = [
    {"financebench_id": "aurora_revenue", "doc_name": "aurora", "answer": "$412 million",
     "question": "What was Aurora Widgets' total revenue in fiscal 2023 (in USD millions)?",
     "evidence": [{"doc_name": "aurora", "evidence_page_num": 0, "evidence_text": TOPICS[0]}]},
    {"financebench_id": "aurora_dividend", "doc_name": "aurora",
     "answer": "The board declared a quarterly dividend of 18 cents per share.",
     "question": "What quarterly dividend did the board of Aurora Widgets declare?",
     "evidence": [{"doc_name": "aurora", "evidence_page_num": 6, "evidence_text": TOPICS[3]}]},
]


def script(kind: str, prompt: str) -> str:
    if kind == "grade":
        return grades_json(prompt, lambda text: "412 million" in text or "18 cents" in text)
    if kind == "answer":
        if "dividend" in prompt.rsplit("Question:", 1)[-1]:
            return "The board declared a quarterly dividend of 18 cents per share [1]."
        return "Total revenue was 412 million dollars [1]."
    reply = schema_reply(prompt, text="What was Aurora Widgets' total revenue?")
    return reply if reply is not None else "Aurora Widgets total revenue fiscal 2023"


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(script, model="scripted") as p:
        yield p


@pytest.fixture(scope="module")
def env(provider: FakeOpenAI, tmp_path_factory) -> dict[str, str]:
    env, _doc = env_with_report(provider, tmp_path_factory.mktemp("pdf"), "bench", RAGAS_DO_NOT_TRACK="true")
    for key in ("OPENAI_API_KEY", "LANGSMITH_TRACING"):
        env.pop(key, None)
    return env


def run_quality(env: dict[str, str], tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    questions = tmp / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    res = subprocess.run([sys.executable, "evals/quality.py", "--questions", str(questions), "--rows",
                          str(tmp / "rows.jsonl"), "--results-dir", str(tmp), *args],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    scope = args[args.index("--scope") + 1] if "--scope" in args else "document"
    return res, json.loads((tmp / f"quality_{scope}.json").read_text())


def test_quality_with_ragas(env: dict[str, str], tmp_path: Path, provider: FakeOpenAI) -> None:
    _res, out = run_quality(env, tmp_path, "--scope", "document")
    rows = {r["id"]: r for r in out["rows"]}
    assert set(rows) == {"aurora_revenue", "aurora_dividend"}
    revenue, dividend = rows["aurora_revenue"], rows["aurora_dividend"]
    # figures decide the numeric reference; the judge (scripted "yes") the prose one
    assert revenue["correct"] is True and revenue["correct_by"] == "numbers" and revenue["refusal"] is False
    assert dividend["correct"] is True and dividend["correct_by"] == "judge"
    assert dividend["judge"]["provider"] == "vllm"
    # the cited excerpt is on an evidence page (revenue: pages 1-2 hold it, evidence says page 1)
    assert revenue["cited_pages"] and revenue["cited_pages"][0][0] == "aurora.pdf"
    assert revenue["citation_precision"] in (0.0, 1.0)
    assert revenue["numbers_grounded"] == 1.0  # 412 is in the excerpt
    # every RAGAS metric produced a number for the answered rows (scripted verdicts are all 1)
    for row in rows.values():
        ragas = row["ragas"]
        for name in ("faithfulness", "answer_relevancy", "llm_context_precision_with_reference", "context_recall",
                     "non_llm_string_similarity", "bleu_score", "rouge_score", "non_llm_context_recall",
                     "non_llm_context_precision_with_reference"):
            assert ragas.get(name) is not None, (name, ragas)
            assert 0.0 <= ragas[name] <= 1.0001
        assert ragas["faithfulness"] == 1.0 and ragas["context_recall"] == 1.0
    means = out["means"]
    assert means["correct"] == {"mean": 1.0, "n": 2} and means["faithfulness"]["n"] == 2
    assert out["command"].startswith("python evals/quality.py") and out["machine"]["cores"]
    md = (tmp_path / "quality_document.md").read_text()
    assert "| correct | 1.0 | 2 |" in md and "aurora_dividend" in md


def test_quality_scope_all_no_ragas_and_resume(env: dict[str, str], tmp_path: Path) -> None:
    _res, out = run_quality(env, tmp_path, "--scope", "all", "--no-ragas", "--limit", "1", "--judge", "none")
    assert out["scope"] == "all" and out["ragas"] == "off" and len(out["rows"]) == 1
    assert "ragas" not in out["rows"][0] and out["rows"][0]["correct"] is True
    # resume: the row already measured is kept, the next question is added
    _res, out = run_quality(env, tmp_path, "--scope", "all", "--no-ragas", "--judge", "none", "--resume")
    assert [r["id"] for r in out["rows"]] == ["aurora_revenue", "aurora_dividend"]
    # without a judge a prose reference is scored by its figures (18 is in the answer)
    assert out["rows"][1]["correct_by"] == "numbers"
