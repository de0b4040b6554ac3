"""Run `python -m cli` as a subprocess against a scripted model (evals/fake_openai.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evals import pdfs

ROOT = Path(__file__).resolve().parents[1]


def run_cli(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m cli ARGS` from the repository root under `env`."""
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)


def ingest_report(env: dict[str, str], directory: Path, user: str) -> str:
    """Write the 8-page Aurora report into `directory`, ingest it for `user`; its document id."""
    pdf = directory / "aurora.pdf"
    pdf.write_bytes(pdfs.long_report(pdfs.AURORA_TOPICS, pages_per_topic=2))
    res = run_cli(env, "ingest", str(pdf), "--user", user)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["document_id"]
