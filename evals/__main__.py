"""The evals' front door: three commands, each a family of scripts (issue 42).

    python -m evals                                  # the commands and every script, one line each
    python -m evals retrieval [SCRIPT] [ARGS...]     # default: evals/retrieval.py
    python -m evals answers [SCRIPT] [ARGS...]       # default: evals/answers.py
    python -m evals load [SCRIPT] [ARGS...]          # default: evals/loadtest.py
    python -m evals tools SCRIPT [ARGS...]           # writes data or weights, or checks a refactoring

SCRIPT names another script of the family (`python -m evals retrieval cv --home DIR` runs
`python evals/cv.py --home DIR`); ARGS go to the script as they are, so `... retrieval --help`
shows evals/retrieval.py's options. Each script still runs on its own as before; this only finds it.
What each measures and what decided it: evals/results/harness.md and evals/results/README.md.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# family -> its scripts, the default first (None: the family has no default and SCRIPT is required)
FAMILIES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "retrieval": ("retrieval", ("retrieval", "cv", "fusion_cv", "scope_from_question", "document_context",
                                "table_coverage", "bench_ocr", "testset")),
    "answers": ("answers", ("answers", "genre", "facts_lookup", "synthetic_formulas", "quality", "ablations",
                            "bench_graph", "bench_grading", "grading_threshold", "relevance_floor",
                            "claims_ablation", "claims_replay", "verify_replay", "answer_in_view", "before_choose")),
    "load": ("loadtest", ("loadtest", "burst", "bench_queue", "page_latency", "bench_search", "bench_ingest",
                          "bench_embed", "bench_cold", "bench_llm", "local_leave", "bench_document_page")),
    "tools": (None, ("genre_docs", "synthetic", "synthetic_kinds", "guardrail", "screen", "readers_diff")),
}


def summary(script: str) -> str:
    """The first line of the script's docstring, read without importing it."""
    doc = ast.get_docstring(ast.parse((HERE / f"{script}.py").read_text())) or ""
    return doc.splitlines()[0] if doc else ""


def listing() -> str:
    lines = [__doc__.strip().splitlines()[0], ""]
    for family, (default, scripts) in FAMILIES.items():
        lines.append(f"python -m evals {family}" + ("" if default else " SCRIPT"))
        lines += [f"  {s:<20} {summary(s)}{'  (default)' if s == default else ''}" for s in scripts]
        lines.append("")
    return "\n".join(lines)


def resolve(argv: list[str]) -> tuple[str, list[str]]:
    """(script, its arguments) for a command line; ValueError with what to type when it names none."""
    if not argv or argv[0] not in FAMILIES:
        raise ValueError(f"name a command: {', '.join(FAMILIES)} (python -m evals lists them)")
    default, scripts = FAMILIES[argv[0]]
    rest = argv[1:]
    if rest and rest[0] in scripts:
        return rest[0], rest[1:]
    if default is None:
        raise ValueError(f"python -m evals {argv[0]} needs a script: {', '.join(scripts)}")
    return default, rest


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(listing())
        return 0
    try:
        script, args = resolve(argv)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    path = HERE / f"{script}.py"
    sys.argv = [str(path.relative_to(HERE.parent)), *args]
    runpy.run_path(str(path), run_name="__main__")  # the script's own exit status ends the process
    return 0


if __name__ == "__main__":
    sys.exit(main())
