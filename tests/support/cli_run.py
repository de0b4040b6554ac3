"""Run `python -m cli` as a subprocess against a scripted model (evals/fake_openai.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from evals import pdfs
from evals.fake_openai import FakeOpenAI, grades_json, subprocess_env

ROOT = Path(__file__).resolve().parents[1]


def report_script(kind: str, prompt: str) -> str:
    """A scripted model over the Aurora report: grades the excerpts holding its revenue relevant, answers
    with the revenue citing [1]."""
    if kind == "grade":
        return grades_json(prompt, lambda text: "412 million" in text)
    if kind == "answer":
        return "Total revenue was 412 million dollars [1]."
    return "Aurora Widgets total revenue fiscal 2023"


def run_cli(env: dict[str, str], *args: str, timeout: float = 300,
            stdin: str | None = None) -> subprocess.CompletedProcess:
    """`python -m cli ARGS` from the repository root under `env` (`stdin`: what it reads there)."""
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout, input=stdin)


def ingest_report(env: dict[str, str], directory: Path, user: str) -> str:
    """Write the 8-page Aurora report into `directory`, ingest it for `user`; its document id."""
    pdf = directory / "aurora.pdf"
    pdf.write_bytes(pdfs.long_report(pdfs.AURORA_TOPICS, pages_per_topic=2))
    res = run_cli(env, "ingest", str(pdf), "--user", user)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["document_id"]


def env_with_report(provider: FakeOpenAI, pdf_dir: Path, user: str, **extra: str) -> tuple[dict[str, str], str]:
    """A fresh THOTQEN_HOME answered by `provider`, with the Aurora report ingested for `user`:
    (the subprocess environment, the report's document id)."""
    home = tempfile.mkdtemp(prefix="thq-cli-", dir="/tmp")  # short: Postgres sockets live here
    env = subprocess_env(provider, home, **extra)
    return env, ingest_report(env, pdf_dir, user)
