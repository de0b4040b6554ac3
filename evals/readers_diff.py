"""The text readers of graph/ and storage/ run over a corpus, so that a refactoring of their patterns
can show it changed nothing they read (issue 39, item 3: patterns moved into lexicon.py, evals/results/
pattern_budget.md). Every reader's output is recorded as its repr; two dumps are compared reader by reader.

    python evals/readers_diff.py corpus OUT.json [--files DIR ...]  # evals/data's questions and answers,
                                                                    # lines and pages of the .pdf/.txt under DIR
    python evals/readers_diff.py dump CORPUS.json OUT.json          # run in a tree's root: every reader's output
    python evals/readers_diff.py compare A.json B.json              # the readers whose outputs differ

A commit against the working tree: `git archive COMMIT | tar -x -C /tmp/base`, then `dump` from /tmp/base
with `PYTHONPATH=/tmp/base` (this script runs the tree it is started in, whichever copy of it is used).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = 12  # of each PDF: enough tables, headers and prose; bounded time


def corpus(out: Path, folders: list[Path]) -> None:
    questions, texts = [], []
    for path in sorted((ROOT / "evals" / "data").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if isinstance(row.get("question"), str):
                questions.append(row["question"])
            texts += [v for v in (row.get("answer"), row.get("why"), *(row.get("accept") or [])) if isinstance(v, str)]
    for folder in folders:
        for path in sorted(folder.rglob("*.txt")):
            texts += [line for line in path.read_text(errors="ignore").splitlines() if line.strip()][:1500]
        for path in sorted(folder.rglob("*.pdf"))[:16]:
            import pymupdf

            with pymupdf.open(path) as doc:
                for i, page in enumerate(doc):
                    if i >= PAGES:
                        break
                    text = page.get_text()
                    texts += [text, *(line for line in text.splitlines() if line.strip())]
    out.write_text(json.dumps({"questions": questions, "texts": texts}))
    print(f"{len(questions)} questions, {len(texts)} texts -> {out}")


def dump(corpus_path: Path, out: Path) -> None:
    sys.path.insert(0, ".")
    from graph import citations, claims, compose, facts, figures, formula, operands, reading
    from graph.calc import choose_op
    try:
        from graph import screening as screen  # the screen node's rules, moved out of graph/nodes/screen.py
    except ImportError:  # a tree from before they moved
        from graph.nodes import screen  # type: ignore[no-redef]
    from graph.nodes import verify as nv
    from graph.verify import sentences, words_of
    from storage import document_filter, issuers, numbers, periods, question_period, statements

    data = json.loads(corpus_path.read_text())
    questions, texts = data["questions"], data["texts"]
    found: dict[str, list[str]] = {}

    def rec(name: str, f: Callable[..., Any], *a: Any, **k: Any) -> None:
        try:
            value = f(*a, **k)
        except Exception as e:  # a reader failing is an output too
            value = f"ERR {type(e).__name__}: {e}"
        found.setdefault(name, []).append(repr(value))

    def failures(a: str, texts: dict[int, str], q: str) -> list[tuple[Any, ...]]:
        return [(f.sentence, f.check, f.repair) for f in claims.failures(sentences(a), a, texts, q)]

    def answer_failure(a: str, q: str) -> tuple[str, str] | None:
        failed = claims.answer_failure(a, reading.read(q), sentences(a))
        return (failed.name, failed.why) if failed else None

    def fig(v: list[Any]) -> list[tuple[Any, ...]]:
        return [(x.number, x.kind, x.text, x.scale, x.decimals, x.currency, x.points, x.start, x.end) for x in v]

    for q in questions:
        rec("read", lambda q: reading.read(q).to_state(), q)
        rec("names_in_lone", reading.names_in, q, lone=True)
        rec("without_source", reading.without_source, q)
        rec("asked_unit", figures.asked_unit, q)
        rec("choose_op", choose_op, q)
        rec("formula", formula.parse, q)
        rec("lookup_plan", formula.lookup_plan, q)
        for op in ("ratio", "percentage", "margin", "days", "growth", "turnover"):
            rec("phrases_" + op, operands.phrases, q, op)
            rec("beyond_" + op, operands.beyond_closed_set, q, op)
        rec("wants_one_figure", compose.wants_one_figure, q)
        rec("metric_of", compose.metric_of, q)
        rec("asked_clause", compose.asked_clause, q)
        rec("asks_for_figure", facts.asks_for_figure, q)
        rec("label_words", lambda q: sorted(facts.label_words(q)), q)
        rec("without_statement_names", facts.without_statement_names, q)
        rec("asked_period", question_period.asked_period, q)
        rec("named_statements", lambda q: sorted(statements.named_statements(q)), q)
        rec("issuer_words", issuers.words, q)
        rec("parse_period", document_filter.parse_period, q)
        rec("normal_form", document_filter.normal_form, q)
        rec("years_named", periods.years_named, q)
        rec("first_date", periods.first_date, q)
        rec("names_another_filer", nv.names_another_filer, q, ["Advanced Micro Devices, Inc."],
            ["Block, Inc.", "MGM Resorts", "3M Co"])
        rec("names_a_rate", operands.names_a_rate, q)
    for t in texts:
        rec("read_figures", lambda t: fig(figures.read_figures(t)), t)
        rec("read_figures_years", lambda t: fig(figures.read_figures(t, years=True, headers=False)), t)
        rec("scales_in", figures.scales_in, t)
        rec("dates_in", lambda t: sorted(claims.dates_in(t), key=repr), t)
        rec("sentences", sentences, t)
        rec("statement_of", statements.statement_of, t[:200])
        rec("unscaled_kind", numbers.unscaled_kind, t[:200])
        rec("words_of", lambda t: sorted(words_of(t)), t)
        rec("nothing_left", screen.nothing_left, t)
        rec("years_named_text", periods.years_named, t)
        rec("first_quarter", periods.first_quarter, t)
    n = len(texts)
    for i, q in enumerate(questions):  # answer sentences from the texts, cited against other texts
        for j in range(3):
            cited, said = texts[(i * 7 + j * 131) % n], texts[(i * 13 + j * 17) % n]
            answer = f"{said.strip()[:300]} [1]."
            for name in ("adds_nothing", "names_not_cited", "date_not_cited", "name_apart_from_what_is_said"):
                rec(name, getattr(claims, name), answer, cited, q)
            for lead in ("Yes, ", "As stated in the first excerpt [1], ", "This information is found in [2]. ", "He "):
                a = lead + answer
                rec("failures", failures, a, {1: cited, 2: said}, q)
                rec("answer_failure", answer_failure, a, q)
                rec("declines", claims.declines, a, sentences(a))
                rec("without_mechanics", nv.without_mechanics, a)
                rec("bare_figures", nv.bare_figures, a)
                rec("unsupported_claims", nv.unsupported_claims, a, {1: cited, 2: said}, q)
                rec("clean_markers", citations.clean_markers, a, 3)
                rec("repair_citations", citations.repair_citations, a, [cited, said], q)
                rec("cite_uncited", citations.cite_uncited, a.replace("[1]", ""), [cited, said], q)
                rec("names_unmet", nv.names_unmet, q, [{"name": "doc", "text": cited}], ["Acme"],
                    filers_only=bool(j % 2))
    out.write_text(json.dumps(found))
    print(f"{len(found)} readers, {sum(len(v) for v in found.values())} outputs -> {out}")


def compare(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    differing = 0
    for name in sorted(set(a) | set(b)):
        left, right = a.get(name, []), b.get(name, [])
        at = [i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y]
        if at or len(left) != len(right):
            differing += len(at) + abs(len(left) - len(right))
            print(f"{name}: {len(at)} of {len(left)} differ")
            for i in at[:3]:
                print(f"  A: {left[i][:300]}\n  B: {right[i][:300]}")
    print(f"{len(a)} readers, {sum(len(v) for v in a.values())} outputs, {differing} differing")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("out", type=Path)
    c.add_argument("--files", type=Path, nargs="*", default=[])
    d = sub.add_parser("dump")
    d.add_argument("corpus", type=Path)
    d.add_argument("out", type=Path)
    m = sub.add_parser("compare")
    m.add_argument("a", type=Path)
    m.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "corpus":
        corpus(args.out, args.files)
        return 0
    if args.command == "dump":
        dump(args.corpus, args.out)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
