"""The composition root (runtime.py) is the only place running parts are built.

Read from the source with `ast`: outside runtime.py no product module constructs a provider, opens
the database or caches a factory, and only the entry points read the environment (`Settings()`).
Then the root itself: each part is built once, lazily, and a test's fakes replace the real ones.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from runtime import Runtime
from settings import Settings
from tests.test_structure import ROOT, python_files, top_level

# Calls that build a running part (a model, a client, a pool, a server); only the root makes them.
BUILDERS = {"build_embedder", "make_reranker", "build_reranker", "LLMChain", "WebSearch", "open_database",
            "make_file_store", "get_local_server", "IngestWorker", "Tokens", "make_app"}
# The entry points: each reads the settings once and hands them to the root.
ENTRY_POINTS = {"runtime.py", "cli.py", "server.py", "studio.py", "jobqueue/health.py"}
# Where a builder is defined or composes others on the root's behalf (the callee is the root's job).
ALLOWED_BUILDS = {
    "runtime.py": BUILDERS,
    "jobqueue/app.py": {"make_app"},  # make_app builds the Celery app itself, for the root and the worker entry
    "jobqueue/health.py": {"make_app"},  # an entry point: a publishing app to ping workers
    "providers/reranker.py": {"build_reranker"},  # make_reranker resolves "auto", then builds
}
# The OCR engine is loaded inside the parsing sandbox's child process, which has no runtime: one per child.
ALLOWED_CACHES = {"ingestion/ocr.py"}
PRODUCT = {"api", "answering", "graph", "identity", "ingestion", "jobqueue", "providers", "storage", "settings",
           "tunables", "runtime", "doctor", "cli", "server", "studio", "sql", "web"}


def product_files() -> list[Path]:
    return [p for p in python_files() if top_level(p) in PRODUCT]


def called_names(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
            if name:
                out.append((node.lineno, name))
    return out


def cache_decorators(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if name in {"cache", "lru_cache"}:  # a cached_property belongs to one object, not the process
                    lines.append(node.lineno)
    return lines


def offences(files: list[Path], root: Path = ROOT) -> list[str]:
    found = []
    for path in files:
        rel = str(path.relative_to(root))
        tree = ast.parse(path.read_text())
        for line, name in called_names(tree):
            if name == "get_settings":
                found.append(f"{rel}:{line} calls get_settings()")
            elif name == "Settings" and rel not in ENTRY_POINTS:
                found.append(f"{rel}:{line} reads the environment (Settings()); take the entry point's settings")
            elif name in BUILDERS and name not in ALLOWED_BUILDS.get(rel, set()):
                found.append(f"{rel}:{line} builds a part ({name}); runtime.py builds it")
        if rel not in ALLOWED_CACHES:
            found += [f"{rel}:{line} caches a factory; runtime.py builds each part once" for line in
                      cache_decorators(tree)]
    return found


def test_only_the_composition_root_builds_parts() -> None:
    found = offences(product_files())
    assert not found, "\n".join(found)


def test_the_check_catches_what_it_forbids(tmp_path: Path) -> None:
    planted = {"graph/nodes/x.py": "from settings import get_settings\ns = get_settings()\n",
               "api/y.py": "import functools\n@functools.cache\ndef chain():\n    return LLMChain(s)\n",
               "storage/z.py": "from settings import Settings\nSettings()\n"}
    for name, body in planted.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    found = offences(sorted(tmp_path.rglob("*.py")), tmp_path)
    assert sorted(f.split(" ", 1)[0] for f in found) == ["api/y.py:3", "api/y.py:4", "graph/nodes/x.py:2",
                                                         "storage/z.py:2"]


class Counted:
    def __init__(self) -> None:
        self.builds = 0


def test_a_part_is_built_once_and_only_when_used(monkeypatch, tmp_path: Path) -> None:
    from ingestion import files

    made = Counted()

    class Store:
        def __init__(self, settings: Settings) -> None:
            made.builds += 1

    monkeypatch.setattr(files, "make_file_store", Store)
    rt = Runtime(Settings(thotqen_home=str(tmp_path)))
    assert made.builds == 0  # nothing is built until asked for
    threads = [threading.Thread(target=lambda: rt.files) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made.builds == 1 and rt.files is rt.files


def test_given_parts_replace_the_real_ones(tmp_path: Path) -> None:
    chain, web = object(), object()
    rt = Runtime(Settings(thotqen_home=str(tmp_path)), chain=chain, web=web)  # type: ignore[arg-type]
    assert rt.chain() is chain and rt.chain("groq1,local") is chain and rt.web is web


def test_each_link_order_and_reranker_is_its_own_part(tmp_path: Path) -> None:
    rt = Runtime(Settings(thotqen_home=str(tmp_path), local_llm=False))
    assert rt.chain() is rt.chain() and rt.chain("local") is not rt.chain()
    assert rt.reranker("none") is rt.reranker("none") and rt.reranker("none").name == "none"
