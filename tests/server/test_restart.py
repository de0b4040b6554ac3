"""`thotqen serve` as a real process: chats, documents and accounts survive a restart."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import STANDALONE, ask, follow_job, upload

ROOT = Path(__file__).resolve().parents[2]


def _serve(env: dict[str, str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("server did not become healthy")


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def serve_env(fake_llm, home, db) -> Iterator[dict[str, str]]:
    env = {**os.environ, "THOTQEN_HOME": str(home), "LOCAL_LLM": "false", "LLM_ORDER": "vllm",
           "VLLM_BASE_URL": f"{fake_llm.url}/v1", "VLLM_MODEL": "fake-model", "LLM_CHEAP_SKIP": "",
           "WEB_SEARCH": "false", "RERANKER": "none",
           # every test on this worker signs up from 127.0.0.1 into the same database: the per-address limit
           # counts them all (the other process tests raise it the same way: tests/server/processes.py)
           "LOGIN_IP_LIMIT": "100000"}
    for key in ("DATABASE_URL", "NVIDIA_API_KEY", "GROQ_API_KEY", "GROQ_API_KEY_2", "GEMINI_API_KEY",
                "GEMINI_API_KEY_2", "GOOGLE_API_KEY", "GOOGLE_API_KEY_2", "OPENROUTER_API_KEY", "TAVILY_API_KEY",
                "JWT_SECRET", "THOTQEN_ENV", "ORIGIN_SECRET", "SUPABASE_URL", "LANGSMITH_API_KEY"):
        env.pop(key, None)
    yield env


def test_chats_survive_a_restart(serve_env, report_pdf) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    creds = {"username": f"restart-{os.getpid()}-{time.time_ns() % 10**6}", "password": "survives restarts"}
    proc = _serve(serve_env, port)
    try:
        with httpx.Client(base_url=url, timeout=120) as c:
            signed = c.post("/api/auth/signup", json=creds)
            assert signed.status_code == 201, signed.text
            tokens = signed.json()
            h = {"Authorization": f"Bearer {tokens['access_token']}"}
            res = upload(c, h, "aurora.pdf", report_pdf)
            assert follow_job(c, h, res.json()["job_id"])[-1][0] == "done"
            chat = c.post("/api/chats", headers=h, json={"title": "before"}).json()["id"]
            first = ask(c, h, chat, "What was Aurora Widgets' total revenue in fiscal 2023?")[-1]
            assert first[0] == "done" and first[1]["provider"] == "vllm"
    finally:
        _stop(proc)

    proc = _serve(serve_env, port)
    try:
        with httpx.Client(base_url=url, timeout=120) as c:
            # the old access token still works (the development secret is kept under THOTQEN_HOME) ...
            assert c.get(f"/api/chats/{chat}", headers=h).status_code == 200
            # ... and the account logs in again
            h = {"Authorization": f"Bearer {c.post('/api/auth/login', json=creds).json()['access_token']}"}
            kept = c.get(f"/api/chats/{chat}", headers=h).json()
            assert kept["title"] == "before"
            assert [m["role"] for m in kept["messages"]] == ["user", "assistant"]
            assert kept["messages"][1]["content"] == first[1]["answer"]
            assert kept["messages"][1]["citations"] == first[1]["citations"]
            # the history from before the restart feeds the next question
            follow = ask(c, h, chat, "And how many people did it employ?")[-1]
            assert follow[0] == "done" and follow[1]["standalone_question"] == STANDALONE
            assert c.get("/api/documents", headers=h).json()["documents"][0]["status"] == "ready"
    finally:
        _stop(proc)
