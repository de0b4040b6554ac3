"""The code's shape, read from the source with `ast` (nothing is imported): imports point one way.

docs/architecture.md draws the layers. A top-level folder or module imports only from the layers
below its own (plus the pairs in SAME_LAYER), so there is no cycle between them; evals never
import tests; the graph's nodes never import the module that builds the graph. Inside api/, the routes
(api/routes/) import the server's infrastructure, never the reverse, and only they build routers or
mount routes. A new top-level folder or module must be placed in LAYERS. The documentation's relative
links must resolve.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. Within a layer nothing imports anything, except the pairs in SAME_LAYER.
LAYERS: list[set[str]] = [
    # lexicon: the words read, declared once; web: the web app's static files (a package so installs ship them)
    {"settings", "tunables", "lexicon", "sql", "web"},
    {"providers", "storage"},  # models; SQL. Neither knows the other: storage never makes vectors
    {"graph", "ingestion", "identity"},  # identity: passwords and tokens, below the server and the root
    {"answering"},
    {"jobqueue"},  # where jobs run: the server's threads (jobqueue.worker) or Celery workers; never the server
    {"runtime"},  # the composition root: builds every running part once per process, none of them the server
    {"api"},  # the HTTP server: api/routes/ over its infrastructure in api/ (never the reverse)
    {"doctor"},  # checks every part, the broker included
    {"cli", "server", "studio"},  # the entry points, each building one runtime
    {"evals"},
    {"tests"},  # may import evals, never the other way
]
SAME_LAYER = {("settings", "tunables")}
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}
# Modules inside graph/ that sit above the nodes: nodes never import them.
ABOVE_NODES = {"graph.builder", "graph.stream"}
# What only a route module does: build a router, mount routes (LangServe's add_routes), include a router.
ROUTE_CALLS = {"APIRouter", "add_routes", "include_router"}


def python_files(root: Path = ROOT) -> Iterator[Path]:
    """The repository's Python files: not in hidden folders (.venv, .git), build or egg-info folders."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d.endswith(".egg-info")
                                                   or d in {"build", "dist", "__pycache__"}))
        yield from (Path(folder) / f for f in sorted(files) if f.endswith(".py"))


def top_level(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else path.stem


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) of every absolute import in the file, lazy and TYPE_CHECKING ones too."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:  # `from graph import builder` imports graph.builder
                yield node.lineno, f"{node.module}.{alias.name}"


@functools.cache
def import_edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """{(importer, imported): ["file:line", ...]} between different top-level names of the repo."""
    tops = {top_level(path, root) for path in python_files(root)}
    edges: dict[tuple[str, str], list[str]] = {}
    for path in python_files(root):
        source = top_level(path, root)
        for line, module in imported_modules(path):
            target = module.split(".")[0]
            if target in tops and target != source:
                edges.setdefault((source, target), []).append(f"{path.relative_to(root)}:{line}")
    return {edge: sorted(set(where)) for edge, where in edges.items()}


def cycles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Every elementary cycle's nodes, found by a depth-first search from each node (the graph is tiny)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                i = path.index(min(path))
                found.add(tuple(path[i:] + path[:i]))
            elif nxt not in path and nxt > start:  # each cycle once, from its smallest node
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return [list(c) for c in sorted(found)]


def _explain(edges: dict[tuple[str, str], list[str]], pairs: list[tuple[str, str]]) -> str:
    return "\n".join(f"{a} imports {b}: {', '.join(edges[(a, b)][:3])}" for a, b in pairs)


def test_every_top_level_name_has_a_layer() -> None:
    unplaced = sorted({top_level(path) for path in python_files()} - set(LAYER))
    assert not unplaced, f"place these in tests/test_structure.py LAYERS (and docs/architecture.md): {unplaced}"


def test_no_import_cycle_between_top_level_folders() -> None:
    edges = import_edges()
    found = cycles(edges)
    detail = "\n\n".join(_explain(edges, list(zip(c, [*c[1:], c[0]], strict=True))) for c in found)
    assert not found, f"import cycles: {[' -> '.join([*c, c[0]]) for c in found]}\n{detail}"


def test_imports_point_down_the_layers() -> None:
    edges = import_edges()
    upward = [(a, b) for a, b in edges if a in LAYER and b in LAYER and LAYER[a] <= LAYER[b]
              and (a, b) not in SAME_LAYER]
    assert not upward, "imports at or above the importer's layer (docs/architecture.md):\n" + _explain(
        edges, sorted(upward))


def test_evals_never_import_tests() -> None:
    edges = import_edges()
    assert ("evals", "tests") not in edges, _explain(edges, [("evals", "tests")])


@pytest.mark.parametrize("lower", ["storage", "providers"])
def test_storage_and_providers_import_only_settings(lower: str) -> None:
    edges = import_edges()
    above = sorted((a, b) for a, b in edges if a == lower and b not in LAYERS[0])
    assert not above, _explain(edges, above)


def nodes_importing_the_builder(root: Path = ROOT) -> list[str]:
    return [f"{path.relative_to(root)}:{line} imports {module}"
            for path in sorted((root / "graph" / "nodes").rglob("*.py")) for line, module in imported_modules(path)
            if module in ABOVE_NODES]


def test_nodes_never_import_the_graph_builder() -> None:
    assert (ROOT / "graph" / "nodes").is_dir(), "graph/nodes/ is where the node modules live"
    offending = nodes_importing_the_builder()
    assert not offending, "\n".join(offending)


# What a node may take from storage: values it hands the evidence store, never a function that reads
# (graph/evidence_store.py is the only way in: the nodes hold no connection).
NODE_STORAGE_VALUES = {"storage.search.ChildUnit", "storage.search.SearchParams",
                       "storage.document_filter.DocumentFilter"}


def nodes_reading_storage(root: Path = ROOT) -> list[str]:
    """Node lines that import a storage function or reach the database (`.database`, `.connection`)."""
    out = []
    for path in sorted((root / "graph" / "nodes").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        rel = path.relative_to(root)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "storage":
                out += [f"{rel}:{node.lineno} imports {node.module}.{a.name}" for a in node.names
                        if f"{node.module}.{a.name}" not in NODE_STORAGE_VALUES]
            elif isinstance(node, ast.Import):
                out += [f"{rel}:{node.lineno} imports {a.name}" for a in node.names
                        if a.name.split(".")[0] == "storage"]
            elif isinstance(node, ast.Attribute) and node.attr in ("database", "connection"):
                out.append(f"{rel}:{node.lineno} uses .{node.attr}")
    return out


def test_nodes_read_storage_only_through_the_evidence_store() -> None:
    offending = nodes_reading_storage()
    assert not offending, "\n".join(offending)


def api_infrastructure(root: Path = ROOT) -> list[Path]:
    """api/'s modules outside api/routes/: what the routes stand on."""
    return [path for path in sorted((root / "api").rglob("*.py")) if "routes" not in path.relative_to(root).parts]


def infrastructure_importing_routes(root: Path = ROOT) -> list[str]:
    return [f"{path.relative_to(root)}:{line} imports {module}" for path in api_infrastructure(root)
            for line, module in imported_modules(path) if module == "api.routes" or module.startswith("api.routes.")]


def routes_outside_routes(root: Path = ROOT) -> list[str]:
    """Routers built, routes mounted or a `mount(app)` defined by a module of api/ outside api/routes/."""
    found = []
    for path in api_infrastructure(root):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            fn = node.func if isinstance(node, ast.Call) else None
            name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
            if name in ROUTE_CALLS:
                found.append(f"{path.relative_to(root)}:{node.lineno} calls {name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "mount":
                found.append(f"{path.relative_to(root)}:{node.lineno} defines mount")
    return found


def test_api_infrastructure_never_imports_routes() -> None:
    assert (ROOT / "api" / "routes").is_dir(), "api/routes/ is where the route modules live"
    offending = infrastructure_importing_routes()
    assert not offending, "routes import api/'s infrastructure, never the reverse:\n" + "\n".join(offending)


def test_routes_live_in_api_routes() -> None:
    offending = routes_outside_routes()
    assert not offending, "a module with routes belongs in api/routes/:\n" + "\n".join(offending)


def test_the_checks_catch_what_they_forbid(tmp_path: Path) -> None:
    """A planted cycle, an evals -> tests import, a node importing the builder, api's infrastructure
    importing a route and a router outside api/routes/ are found."""
    for name, body in {"graph/nodes/__init__.py": "", "graph/nodes/grade.py": "from graph import builder\n",
                       "graph/__init__.py": "", "graph/a.py": "import nodes.x\n", "nodes/__init__.py": "",
                       "nodes/x.py": "from graph.state import State\n", "evals/__init__.py": "",
                       "evals/load.py": "from tests.graph import conftest\n", "tests/__init__.py": "",
                       "tests/t.py": "import evals.load\n", ".venv/lib.py": "import tests\n",
                       "api/__init__.py": "", "api/limits.py": "from api.routes import chats\n",
                       "api/edge.py": "from fastapi import APIRouter\nrouter = APIRouter()\n",
                       "api/routes/__init__.py": "", "api/routes/chats.py": "from api import limits\n"
                                                                        "router = APIRouter()\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    edges = import_edges(tmp_path)
    assert set(edges) == {("graph", "nodes"), ("nodes", "graph"), ("evals", "tests"), ("tests", "evals")}
    assert cycles(edges) == [["evals", "tests"], ["graph", "nodes"]]
    assert nodes_importing_the_builder(tmp_path) == ["graph/nodes/grade.py:1 imports graph.builder"]
    (tmp_path / "graph/nodes/facts.py").write_text(
        "from storage.search import SearchParams\nfrom storage.tables import find_cells\nimport storage.db\n"
        "def f(cfg):\n    with cfg.running.database.connection() as conn:\n        return conn\n")
    assert nodes_reading_storage(tmp_path) == [
        "graph/nodes/facts.py:2 imports storage.tables.find_cells", "graph/nodes/facts.py:3 imports storage.db",
        "graph/nodes/facts.py:5 uses .connection", "graph/nodes/facts.py:5 uses .database"]
    assert infrastructure_importing_routes(tmp_path) == ["api/limits.py:1 imports api.routes",
                                                         "api/limits.py:1 imports api.routes.chats"]
    assert routes_outside_routes(tmp_path) == ["api/edge.py:2 calls APIRouter"]


TREE_LABELS = {"api/": None, "routes/": "api/routes", "(infrastructure)": "api", "jobqueue/": "jobqueue",
               "identity/": "identity"}


def documented_tree(markdown: str) -> dict[str, set[str]]:
    """The modules docs/architecture.md's tree names per folder: a label starts a line, further
    lines of the same folder are indented past it."""
    block = re.search(r"```\napi/\n.*?```", markdown, re.DOTALL)
    assert block, "docs/architecture.md has no tree of api/ (a fenced block starting with `api/`)"
    tree: dict[str, set[str]] = {}
    folder = None
    for line in block.group(0).splitlines()[1:-1]:
        words = line.split()
        if line[:13].strip():
            folder, words = TREE_LABELS[words[0]], words[1:]
        if folder is not None:
            tree.setdefault(folder, set()).update(words)
    return tree


def test_architecture_doc_shows_the_servers_tree() -> None:
    tree = documented_tree((ROOT / "docs" / "architecture.md").read_text())
    actual = {folder: {p.stem for p in (ROOT / folder).glob("*.py") if p.stem != "__init__"} for folder in tree}
    assert set(tree) == {"api", "api/routes", "jobqueue", "identity"}
    assert tree == actual, "update docs/architecture.md's tree: " + "; ".join(
        f"{folder}: missing {sorted(actual[folder] - names)}, gone {sorted(names - actual[folder])}"
        for folder, names in tree.items() if names != actual[folder])


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)}


@pytest.mark.parametrize("doc", ["README.md", "docs", "evals/results/README.md", "evals/results/harness.md"])
def test_documentation_links_resolve(doc: str) -> None:
    assert (ROOT / doc).exists(), f"{doc} is missing"
    files = sorted((ROOT / doc).glob("*.md")) if (ROOT / doc).is_dir() else [ROOT / doc]
    broken = []
    for md in files:
        for link in LINK.findall(md.read_text()):
            if re.match(r"[a-z]+:", link):
                continue  # http(s), mailto: not checked offline
            path, _, anchor = link.partition("#")
            target = (md.parent / path).resolve() if path else md
            if not target.exists():
                broken.append(f"{md.relative_to(ROOT)}: {link} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(target.read_text()):
                broken.append(f"{md.relative_to(ROOT)}: {link} (no such heading)")
    assert files and not broken, "\n".join(broken)
