"""`thotqen model-server`: a cold `thotqen ask` finds the kept-alive local model instead of loading one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import providers.local_model as lm
from tests.support.settings import make_settings


class _Health(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def health() -> Iterator[str]:
    """An HTTP endpoint answering /health as llama.cpp's server does (the real one: the slow test)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def settings(tmp_path: Path):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return make_settings(thotqen_home=tmp_path / "home", local_llm_model_path=model)


def _record(settings, **fields: object) -> None:
    path = lm.endpoint_file(settings.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields))


def test_a_live_record_is_used_and_a_stale_one_ignored(settings, health: str, monkeypatch) -> None:
    assert lm.kept_alive_server(settings) is None  # nothing recorded
    good = {"address": health, "api_key": "k", "pid": os.getpid(), "model_path": str(settings.local_model.model_path)}
    _record(settings, **good)
    kept = lm.kept_alive_server(settings)
    assert kept is not None and kept.base_url == f"{health}/v1" and kept.api_key == "k"

    monkeypatch.setattr(lm, "_server", None)
    monkeypatch.setattr(lm, "LocalServer", lambda *_: pytest.fail("started a model although one is kept alive"))
    assert lm.get_local_server(settings) == kept
    lm.get_local_server(settings).close()  # not ours: nothing happens
    assert lm.kept_alive_server(settings) == kept

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for stale in ({**good, "pid": int(dead.stdout)},               # its process is gone
                  {**good, "model_path": "/elsewhere/other.gguf"},  # serves another model
                  {**good, "address": "http://127.0.0.1:9"}):        # not answering
        _record(settings, **stale)
        assert lm.kept_alive_server(settings) is None, stale
    lm.endpoint_file(settings.home).write_text("{not json")
    assert lm.kept_alive_server(settings) is None


@pytest.mark.slow
def test_model_server_command_keeps_the_real_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "THOTQEN_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "cli", "model-server"], env=env, stderr=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        record = lm.endpoint_file(home)
        deadline = time.monotonic() + 300
        while not record.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.5)
        assert record.stat().st_mode & 0o077 == 0  # the key is for this user only
        settings = make_settings(thotqen_home=home)
        kept = lm.kept_alive_server(settings)
        assert kept is not None and kept.pid == proc.pid
        import urllib.request

        request = urllib.request.Request(
            f"{kept.base_url}/chat/completions", headers={"Authorization": f"Bearer {kept.api_key}",
                                                          "Content-Type": "application/json"},
            data=json.dumps({"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 4}).encode())
        with urllib.request.urlopen(request, timeout=120) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert not lm.endpoint_file(home).exists()  # a stopped server leaves no record
