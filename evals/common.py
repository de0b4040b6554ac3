"""Shared helpers for benchmarks: the machine description, result writing, the resumable rows
file of a run over questions, and the eval's runtime."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterator

    from runtime import Runtime

RESULTS = Path(__file__).parent / "results"


def configure_eval_process() -> None:
    """What every eval script sets first: the product's process environment, and no RAGAS analytics."""
    from providers.runtime import configure_process

    configure_process()
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


configure_eval_process()  # evals are scripts that all import this module first: their process entry
FINANCEBENCH = Path(
    os.environ.get("FINANCEBENCH_DIR", Path(__file__).resolve().parents[2] / "shared/eval/financebench")
)


def machine() -> dict:
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor()
    mem_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": mem_gb, "python": platform.python_version(),
            "platform": platform.platform()}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_result(name: str, payload: dict, markdown: str, directory: Path | None = None) -> None:
    """Write evals/results/NAME.json and NAME.md (or under `directory`: tests), each naming the
    command and the machine."""
    out = directory or RESULTS
    out.mkdir(parents=True, exist_ok=True)
    command = "python " + " ".join([str(Path(sys.argv[0]).as_posix()), *sys.argv[1:]])
    meta = {"command": command, "machine": machine(), "commit": git_commit(),
            "date": datetime.now(UTC).isoformat(timespec="seconds")}
    (out / f"{name}.json").write_text(json.dumps({**meta, **payload}, indent=2, default=str) + "\n")
    m = meta["machine"]
    header = (
        f"Command: `{command}`  \nMachine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, "
        f"Python {m['python']}  \nCommit: {meta['commit']}, {meta['date']}\n\n"
    )
    (out / f"{name}.md").write_text(header + markdown.rstrip() + "\n")


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def resumable_rows(path: Path, resume: bool) -> list[dict]:
    """A run's rows file: with `resume`, the rows a run cut short already wrote (none when the file is
    missing); without, the file emptied for a new run."""
    if not resume:
        path.write_text("")
        return []
    return load_jsonl(path) if path.is_file() else []


def append_row(path: Path, row: dict) -> None:
    """One finished row appended to the rows file, so that a run cut short keeps it."""
    with path.open("a") as f:
        f.write(json.dumps(row, default=str) + "\n")


def eval_runtime(home: Path | None = None) -> Runtime:
    """An eval's composition root: THOTQEN_HOME pointed at `home` (when given), the settings read once
    and the runtime (runtime.py) built on them; each eval calls this once, at its entry. (Imported
    here so that the evals needing no runtime do not load the product stack.)"""
    if home is not None:
        os.environ["THOTQEN_HOME"] = str(home)
    from runtime import build_runtime
    from settings import Settings

    return build_runtime(Settings())


def graph_run(user: str, run_name: str) -> tuple[Any, Any]:
    """(config, context) of a graph run for `user` on the runtime THOTQEN_HOME names, its embedder loaded."""
    import cli
    from graph.stream import run_config, run_context
    from runtime import build_runtime

    rt = build_runtime()
    cli._embedder(rt)
    owner = cli._user_id(rt.database, argparse.Namespace(user=user, web_account=False))
    config = run_config(owner_id=owner, user=user, run_name=run_name)
    return config, run_context(rt, config)


def states_before_choose(questions: list[str], user: str, run_name: str, *, before_search: bool = False,
                         run: tuple[Any, Any] | None = None) -> Iterator[dict]:
    """Each question's graph state, the graph run for `user` up to compute, before choose, so no node calls a
    model (with the embedded local model first and HyDE off); `before_search`: only up to the search. `run`:
    a `graph_run` already built, else one is."""
    from graph.builder import graph

    config, context = run or graph_run(user, run_name)
    for question in questions:
        state: dict = {}
        for state in graph.stream({"question": question}, config, context=context, stream_mode="values"):
            route = state.get("route") or []
            if "compute" in route or (before_search and "retrieve" in route):
                break
        yield state


def bench_user(runtime: Runtime, user: str, *, create_user: bool = True) -> tuple[int | None, dict[str, uuid.UUID]]:
    """(owner id of `user`, {document name: id of its ready documents}); `create_user` False: None when absent."""
    from storage.documents import ready_documents
    from storage.users import find_user, get_or_create_user

    with runtime.database.connection() as conn:
        owner = get_or_create_user(conn, user) if create_user else find_user(conn, user)
        docs = ready_documents(conn, owner_id=owner)
    return owner, docs


def open_bench(home: Path | None, user: str, *, create_user: bool = True):
    """Point THOTQEN_HOME at `home`, build the eval's runtime, find (or create) `user`.

    Returns (settings, db, embedder, owner_id, {document name: id of its ready documents}), the
    runtime's parts (evals/ablations.py, which hands the runtime to the graph, uses eval_runtime).
    """
    runtime = eval_runtime(home)
    owner, docs = bench_user(runtime, user, create_user=create_user)
    return runtime.settings, runtime.database, runtime.embedder, owner, docs


def rasterise(data: bytes, pages: set[int] | None = None, dpi: int = 150) -> bytes:
    """The PDF with the given 1-based pages (all when None) replaced by an image of themselves at
    `dpi`: a scan of the page with no text layer."""
    import pymupdf

    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    for index, page in enumerate(src):
        if pages is None or index + 1 in pages:
            pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            new = out.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=pix.tobytes("png"))
        else:
            out.insert_pdf(src, from_page=index, to_page=index)
    result = out.tobytes(garbage=3, deflate=True)
    out.close()
    src.close()
    return result


def pdf_pages(data: bytes, pages: list[int]) -> bytes:
    """A PDF of the given 1-based pages of `data`, in that order."""
    import pymupdf

    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    for page in pages:
        out.insert_pdf(src, from_page=page - 1, to_page=page - 1)
    result = out.tobytes(garbage=3, deflate=True)
    out.close()
    src.close()
    return result
