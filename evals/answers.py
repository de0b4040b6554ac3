"""Answers a reader can check (issue 24): figures right, figures traceable, out-of-scope refused.

    THOTQEN_HOME=DIR python evals/answers.py --set dev|oos|synthetic [--limit N] [--config JSON]

Runs the compiled graph in process (graph/stream.py's run_graph) over one set:
  dev        the 51 FinanceBench development questions, each within its own filing (--scope)
  oos        evals/data/out_of_scope.jsonl (hand-written: general knowledge, companies not uploaded,
             years no filing covers, figures a filing does not report) interleaved with the 51
             answerable ones, every question across all the user's filings, as a chat over them is
             (--out-of-scope evals/data/out_of_scope_holdout.jsonl: 48 more, written on 2026-12-02
             before that day's refusal rules and never read while writing them: the held-back batch)
  synthetic  evals/data/synthetic_questions.jsonl (evals/synthetic.py: written from statement
             rows, so every reference is a figure; the scale its evidence page states, "in
             millions", is read from the PDF)
and reports, all questions and per company beside the mean over companies (held-back / tuned-on):
  figure questions correct   every figure of the reference in the answer, within the rounding the
                             question asks ("round to two decimal places": half a unit of the last
                             place), else within --tolerance; scale-strict: "1.7 million" is not
                             "1.7 billion" (scoring.numeric_match accepts a figure as written
                             whatever its scale word; its verdict is kept per row as numbers_match)
  correct, all               figures as above, prose by evals/scoring.py's judge (--judge chain),
                             else counted as not judged; a refusal is incorrect
  untraced figures           figures of the answer the user reads found in no cited excerpt
                             (unit-aware), fact or calculation the outcome carries, nor in the
                             question (the check's own report is not consulted)
  unit/scale errors          an answer figure equal to a reference figure times 1e3, 1e6 or 1e9
                             (either way) while no figure matches it
  out-of-scope refused       the answer refuses ("the documents don't say") and cites nothing
  answerable refused         an answerable question refused (blocked, empty, or refusal text)
  evidence line holds gold   figure questions whose cited evidence lines hold every reference
                             figure (a bare figure in the scale its row's table declares), or,
                             where the answer is a calculation whose result is the reference,
                             show every operand's row (no row prints a computed figure); n/a
                             while no outcome has them
  latency                    end to end p50 / p90, seconds around run_graph
Per company: each company's figures come from its own questions. With --fold-configs FILE
({company: tunables chosen without that company}) each company's questions run under its fold's
tunables, so every company row is held back; otherwise declare with --tuned-on the companies any
choice in --config was tuned on, and the rest count as held back. Rows are appended to --rows as
they finish (--resume continues). Writes evals/results/answers_<set>.{json,md} (or --name).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from graph.figures import Figure
from lexicon import SCALES

if TYPE_CHECKING:
    from runtime import Runtime
from evals.common import FINANCEBENCH, append_row, eval_runtime, load_jsonl, resumable_rows, write_result
from evals.scoring import is_refusal_text, percentile, share_value

DATA = Path(__file__).parent / "data"
OUT_OF_SCOPE = DATA / "out_of_scope.jsonl"
SYNTHETIC = DATA / "synthetic_questions.jsonl"
OOS_KINDS = ("general", "other_company", "year_not_covered", "figure_not_reported")
NO_COMPANY = "(no uploaded company)"  # the fold of general-knowledge and other-company questions
# A figure rounded to about three significant digits still traces to its source (1,693,954
# thousand -> "$1.69 billion"); coarser rounding is the answer's, not the filing's.
TRACE_TOLERANCE = 0.005
# A printed figure this large on a scaled page is a count in units (shares), not an amount in that scale.
COUNT_NOT_AMOUNT = 1e8
SCALE_FACTORS = (1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9)
_SCALE_WORD = re.compile(
    r"\(\s*(?:(?:amounts|dollars|\$|us\$|usd)\s+)?(?:in\s+)?(thousands|millions|billions)\b"
    r"|\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)
_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
_ROUNDING = re.compile(r"\b(zero|one|two|three|four|\d)\s+decimal\s+(?:places?|points?)\b", re.IGNORECASE)
_NEAREST = re.compile(r"\bnearest\s+(whole\s+number|integer|whole\s+percent|percent|tenth|hundredth)\b",
                      re.IGNORECASE)


# -- the questions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    id: str
    set: str  # "dev", "oos" or "synthetic"
    question: str
    company: str | None
    doc_name: str | None  # the filing it is about (None: asked across all filings)
    reference: str | None  # None: out of scope, nothing to answer
    kind: str  # "figure" or "prose" for answerable questions, an OOS_KINDS entry otherwise
    base_scale: float | None = 1.0  # what a bare reference figure is in (1e6: millions); None unknown
    evidence: frozenset[tuple[str, int]] = frozenset()  # (filing, 1-based page)

    @property
    def answerable(self) -> bool:
        return self.reference is not None


def dev_items(path: Path | None = None) -> list[Item]:
    out = []
    for q in load_jsonl(path or FINANCEBENCH / "questions.jsonl"):
        kind = "figure" if scoring.is_numeric_answer(q["answer"]) else "prose"
        out.append(Item(q["financebench_id"], "dev", q["question"], q["company"], q["doc_name"], q["answer"], kind,
                        scoring.question_scale(q["question"]), frozenset(scoring.evidence_pages(q))))
    return out


def oos_items(path: Path = OUT_OF_SCOPE) -> list[Item]:
    return [Item(f"oos-{n:02d}", "oos", r["question"], r.get("company"), None, None, r["kind"], None)
            for n, r in enumerate(load_jsonl(path), 1)]


def page_scale(text: str) -> float | None:
    """The one scale a statement's text declares ("(In millions, except per share data)"), else None."""
    found = {(m.group(1) or m.group(2)).lower() for m in _SCALE_WORD.finditer(text or "")}
    return SCALES[found.pop()] if len(found) == 1 else None


def synthetic_items(path: Path = SYNTHETIC, pdfs: Path | None = None) -> list[Item]:
    """The statement-row questions; a row's scale is its own `scale` field or what its evidence
    pages declare (unknown when they declare none or disagree)."""
    import pymupdf

    pdfs = pdfs or FINANCEBENCH / "pdfs"
    opened: dict[str, Any] = {}
    out = []
    for r in load_jsonl(path):
        scale = r.get("scale")
        if scale is None:
            doc = opened.setdefault(r["doc_name"], pymupdf.open(pdfs / f"{r['doc_name']}.pdf"))
            scales = {page_scale(doc[p - 1].get_text()) for p in r["pages"] if 0 < p <= len(doc)}
            scale = scales.pop() if len(scales) == 1 else None
            if scale and any(abs(n.value) >= COUNT_NOT_AMOUNT for n in numbers(r["answer"])):
                scale = None  # a share count on a page "in millions", not hundreds of trillions
        out.append(Item(r["id"], "synthetic", r["question"], r["company"], r["doc_name"], r["answer"], "figure",
                        scale, frozenset((r["doc_name"], p) for p in r["pages"])))
    return out


def interleave(*parts: list[Item]) -> list[Item]:
    """Round-robin, so that a --limit still mixes out-of-scope and answerable questions."""
    out: list[Item] = []
    for i in range(max((len(p) for p in parts), default=0)):
        out += [p[i] for p in parts if i < len(p)]
    return out


# -- scoring one answer ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Gold:
    value: float  # as printed, unsigned
    percent: bool
    magnitude: float | None  # in units (dollars, shares); None when the scale is unknown
    amount: bool = False  # a money or count amount with a known scale: what a scale error can hit


def gold_figures(item: Item) -> list[Gold]:
    """The reference's figures. A bare one is in the item's base scale; it is an amount when that
    scale is thousands or more, or the reference writes a currency (ratios and days are not: an
    operand in millions must not read as a ratio's scale error)."""
    out = []
    reference = item.reference or ""
    for n in numbers(reference):
        base = n.scale if n.scale != 1.0 else item.base_scale
        known = base is not None and not n.percent
        out.append(Gold(abs(n.value), n.percent, abs(n.value) * base if known and base is not None else None,
                        amount=known and (base != 1.0 or "$" in reference)))
    return out


def rounding_decimals(question: str) -> int | None:
    """The decimals a question asks its answer rounded to, None when it asks none."""
    m = _ROUNDING.search(question or "")
    if m:
        word = m.group(1).lower()
        return int(word) if word.isdigit() else _DIGITS[word]
    m = _NEAREST.search(question or "")
    if m:
        return {"tenth": 1, "hundredth": 2}.get(m.group(1).lower(), 0)
    return None


def tolerance(gold: Gold, decimals: int | None, default: float) -> float:
    """Relative tolerance for one reference figure: half a unit of the place the question rounds to."""
    if decimals is None or gold.value == 0:
        return default
    return 0.5 * 10 ** -decimals / gold.value * (1 + 1e-9)


def _percent_forms(value: float, percent: bool) -> set[float]:
    v = abs(value)
    return {v, v / 100} if percent else {v, v * 100}


@dataclass(frozen=True)
class Number:
    """A figure as this eval compares it: the number as written, its own scale word, a percentage or not."""

    value: float
    scale: float
    percent: bool


def numbers(text: str) -> list[Number]:
    return [Number(f.number, f.scale, f.kind == "percent") for f in scoring.parse_numbers(text)]


def figure_matches(a: Number, g: Gold, question_scale: float, rel_tol: float) -> bool:
    """Whether answer figure `a` states reference figure `g`, its scale word taken at its word."""
    if g.percent or a.percent:
        return any(scoring.close(x, y, rel_tol) for x in _percent_forms(a.value, a.percent)
                   for y in _percent_forms(g.value, g.percent))
    value = abs(a.value)
    if g.magnitude is None:  # the reference's scale is unknown: as printed
        return scoring.close(value, g.value, rel_tol)
    if a.scale != 1.0:
        return scoring.close(value * a.scale, g.magnitude, rel_tol)
    # a bare figure: in the unit the question asks, or the reference copied as printed
    return scoring.close(value * question_scale, g.magnitude, rel_tol) or scoring.close(value, g.value, rel_tol)


def _looks_like_year(n: Number) -> bool:
    return n.scale == 1.0 and not n.percent and n.value.is_integer() and 1900 <= n.value <= 2100


def scale_error(answer: str, golds: list[Gold], question: str, rel_tol: float) -> bool:
    """A reference figure no answer figure matches, but one equals it at a 1e3/1e6/1e9 factor."""
    found = numbers(answer)
    qs = scoring.question_scale(question)
    for g in golds:
        if not g.amount or g.magnitude is None or any(figure_matches(a, g, qs, rel_tol) for a in found):
            continue
        for a in found:
            if a.percent or _looks_like_year(a):
                continue
            magnitude = abs(a.value) * (a.scale if a.scale != 1.0 else qs)
            if any(scoring.close(magnitude, g.magnitude * f, rel_tol) for f in SCALE_FACTORS):
                return True
    return False


def figures_correct(answer: str, item: Item, default_tol: float) -> bool:
    golds = gold_figures(item)
    found = numbers(answer)
    qs = scoring.question_scale(item.question)
    decimals = rounding_decimals(item.question)
    return bool(golds) and all(any(figure_matches(a, g, qs, tolerance(g, decimals, default_tol)) for a in found)
                               for g in golds)


def _texts(value: Any) -> list[str]:
    """Strings in a future outcome field: a string, a dict's text/value/result, or a list of those."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [str(value[k]) for k in ("text", "line", "value", "result", "working") if value.get(k) is not None]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _texts(v)]
    return [str(value)]


@dataclass(frozen=True)
class Line:
    """An evidence line and the scale its table declares (None: none read)."""

    text: str
    scale: float | None = None


def evidence_lines(out: dict) -> list[Line] | None:
    """The cited citations' evidence lines; None when no citation carries the field."""
    cited = scoring.cited_citations(out)
    keys = ("evidence_line", "evidence_lines", "line", "evidence")
    if not any(k in c for c in cited for k in keys):
        return None
    lines = []
    for c in cited:
        for k in keys:
            items = c.get(k)
            for item in items if isinstance(items, list) else [items]:
                scale = page_scale(str(item.get("context") or "")) if isinstance(item, dict) else None
                lines += [Line(t, scale) for t in _texts(item)]
    return lines


def traced_figures(out: dict, question: str) -> tuple[int, int, str]:
    """(figures in the answer, of them untraced, by what): each figure of the answer the user reads
    looked up in the cited excerpts (in their declared scale), the facts it cites (as shown, and
    their rows) and the calculation, and the question. Read from the outcome itself, not from the
    check's own report: a figure the check let through untraced is counted."""
    found = scoring.parse_numbers(out.get("answer") or "")
    sources: list[tuple[list[Figure], float]] = [
        (scoring.parse_numbers(c.get("text") or ""), page_scale(c.get("text") or "") or 1.0)
        for c in scoring.cited_citations(out)]
    facts = [str(t) for f in out.get("facts") or [] for t in (*_texts(f), f.get("shown"), f.get("evidence"),
                                                               f.get("value_text")) if t]
    sources += [(scoring.parse_numbers(t), 1.0) for t in [*facts, *_texts(out.get("calculation")),
                                                            *_texts(out.get("calculations"))]]
    # the cited rows and sentences (a fact's row, in the scale its table declares): what the reader checks
    sources += [(scoring.parse_numbers(line.text), line.scale or 1.0) for line in evidence_lines(out) or []]
    sources.append((scoring.parse_numbers(question), 1.0))
    untraced = sum(1 for n in found
                   if not any(scoring.number_found(n, nums, TRACE_TOLERANCE, scale) for nums, scale in sources))
    return len(found), untraced, "excerpts"


def line_holds(lines: Sequence[Line | str], golds: list[Gold], question: str, rel_tol: float) -> bool:
    """Every reference figure printed on a line (a bare one in the scale its table declares)."""
    qs = scoring.question_scale(question)
    read = [line if isinstance(line, Line) else Line(line) for line in lines]
    nums = [n if n.scale != 1.0 or not line.scale else Number(n.value, line.scale, n.percent)
            for line in read for n in numbers(line.text)]
    return bool(golds) and all(any(figure_matches(n, g, qs, rel_tol) for n in nums) for g in golds)


# Numbers a working writes that are the formula's, not an operand's: days in a year, a percentage's
# hundred, an average's count, a growth's one.
_FORMULA_CONSTANTS = frozenset({365.0, 360.0, 100.0, 1.0, 2.0, 3.0, 4.0, 5.0})


def working_shown(out: dict, lines: list[Line], item: Item, tol: float) -> bool:
    """The answer's calculation gives the reference, and every operand of its working is on an evidence
    line (a cited row, in the scale its table declares). The outcome keeps no facts: the working's own
    numbers are the operands as shown."""
    calculation = out.get("calculation") or {}
    if not calculation.get("operands") or not figures_correct(str(calculation.get("text") or ""), item, tol):
        return False
    shown = str(calculation.get("working") or "").split("=")[0]
    operands = [n for n in scoring.parse_numbers(shown) if n.value not in _FORMULA_CONSTANTS]
    rows = [(scoring.parse_numbers(line.text), line.scale or 1.0) for line in lines]
    return bool(operands) and all(any(scoring.number_found(n, nums, TRACE_TOLERANCE, scale) for nums, scale in rows)
                                  for n in operands)


Judge = Callable[[str, str, str], bool | None]  # (question, reference, answer) -> correct


def score(item: Item, out: dict, seconds: float, *, tol: float, judge: Judge | None = None,
          refusal_texts: Iterable[str] = ()) -> dict:
    """One row: the outcome of `item` scored against its reference (no model unless `judge`)."""
    answer = out.get("answer") or ""
    cited = bool(scoring.cited_citations(out))
    refused = bool(out.get("blocked")) or is_refusal_text(answer, refusal_texts)
    figures, untraced, traced_by = traced_figures(out, item.question)
    row: dict[str, Any] = {"id": item.id, "set": item.set, "company": item.company, "doc_name": item.doc_name,
                           "kind": item.kind, "question": item.question, "expected": item.reference,
                           "answer": answer, "cited": cited, "refused": refused,
                           "refused_no_citation": refused and not cited, "figures": figures,
                           "untraced": untraced, "traced_by": traced_by, "total_s": round(seconds, 2),
                           "cited_pages": [[c.get("name"), c.get("page")] for c in scoring.cited_citations(out)],
                           "route": out.get("route"), "timings": out.get("timings")}
    if not item.answerable:
        return row
    golds = gold_figures(item)
    decimals = rounding_decimals(item.question)
    figure_tol = min((tolerance(g, decimals, tol) for g in golds), default=tol)
    if item.kind == "figure":
        row["numbers_match"] = scoring.numeric_match(item.reference or "", answer, question=item.question,
                                                     rel_tol=figure_tol)
        row["scale_known"] = any(g.amount for g in golds)
        row["scale_error"] = not refused and scale_error(answer, golds, item.question, figure_tol)
        lines = evidence_lines(out)
        if lines is not None:
            by_line = line_holds(lines, golds, item.question, figure_tol)
            row["evidence_line_holds"] = by_line or working_shown(out, lines, item, tol)
            row["evidence_by"] = "line" if by_line else "working" if row["evidence_line_holds"] else None
        else:
            row["evidence_line_holds"] = None
    if refused:
        row.update(correct=False, correct_by="refusal")
    elif item.kind == "figure":
        row.update(correct=figures_correct(answer, item, tol), correct_by="figures")
    elif judge is not None:
        verdict = judge(item.question, item.reference or "", answer)
        row.update(correct=verdict, correct_by="judge" if verdict is not None else None)
    else:
        row.update(correct=None, correct_by=None)  # prose with no judge: not judged
    return row


# -- figures over rows ----------------------------------------------------------------------------
def measure(rows: list[dict]) -> dict:
    """The issue's figures over `rows`: {name: {value, k, n}}, latency in seconds."""
    answerable = [r for r in rows if r["set"] != "oos"]
    fig = [r for r in answerable if r["kind"] == "figure"]
    judged = [r for r in answerable if r.get("correct") is not None]
    lines = [r for r in fig if r.get("evidence_line_holds") is not None]
    oos = [r for r in rows if r["set"] == "oos"]
    seconds = [r["total_s"] for r in rows if r.get("total_s") is not None]
    return {
        "figure_correct": share_value(sum(1 for r in fig if r.get("correct")), len(fig)),
        "correct_all": {**share_value(sum(1 for r in judged if r["correct"]), len(judged)),
                        "not_judged": len(answerable) - len(judged)},
        "untraced_figures": share_value(sum(r["untraced"] for r in rows), sum(r["figures"] for r in rows)),
        "unit_scale_errors": share_value(sum(1 for r in fig if r.get("scale_error")),
                                    sum(1 for r in fig if r.get("scale_known"))),
        "oos_refused_no_citation": share_value(sum(1 for r in oos if r["refused_no_citation"]), len(oos)),
        "answerable_refused": share_value(sum(1 for r in answerable if r["refused"]), len(answerable)),
        "evidence_line_holds_gold": share_value(sum(1 for r in lines if r["evidence_line_holds"]), len(lines)),
        "latency_s": {"p50": percentile(seconds, 50), "p90": percentile(seconds, 90), "n": len(seconds)},
    }


def _mean_of(per: list[dict]) -> dict:
    """Per figure, the mean over folds of its value (folds where it is undefined left out)."""
    out: dict[str, dict] = {}
    for name in [k for k, v in per[0].items() if isinstance(v, dict)] if per else ():
        key = "p50" if name == "latency_s" else "value"
        vals = [f[name][key] for f in per if f[name][key] is not None]
        out[name] = {key: round(statistics.mean(vals), 3) if vals else None, "folds": len(vals)}
    return out


def folds(rows: list[dict], tuned_on: Iterable[str] = (), companies: Iterable[str] | None = None) -> dict:
    """Per company (its own questions, answerable and out-of-scope alike; out-of-scope questions
    about no uploaded company form a fold of their own), the mean over the held-back companies and
    over the tuned-on ones, and all rows pooled. `companies`: the uploaded ones (default: the
    development split's, and any an answerable row is about)."""
    tuned = set(tuned_on)
    uploaded = set(companies) if companies is not None else development_companies()
    uploaded |= {r["company"] for r in rows if r["set"] != "oos" and r.get("company")}
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["company"] if r.get("company") in uploaded else NO_COMPANY, []).append(r)
    per = {c: {"held_back": c not in tuned, "questions": len(rs), **measure(rs)} for c, rs in sorted(groups.items())}
    named = [c for c in per if c != NO_COMPANY]
    return {"companies": per,
            "held_back_mean": _mean_of([per[c] for c in named if per[c]["held_back"]]),
            "tuned_on_mean": _mean_of([per[c] for c in named if not per[c]["held_back"]]),
            "all": measure(rows)}


def development_companies() -> set[str]:
    path = FINANCEBENCH / "documents.jsonl"
    return {d["company"] for d in load_jsonl(path)} if path.is_file() else set()


# -- the report -----------------------------------------------------------------------------------
TARGETS = {"figure_correct": "≥ 0.60 held-back", "correct_all": "≥ 0.50 held-back", "untraced_figures": "≤ 0.02",
           "unit_scale_errors": "0 (synthetic)", "oos_refused_no_citation": "≥ 0.95",
           "answerable_refused": "≤ 0.10", "evidence_line_holds_gold": "≥ 0.80", "latency_s": "p50 ≤ 20 s"}
LABELS = {"figure_correct": "correct, figure questions", "correct_all": "correct, all (prose by the judge)",
          "untraced_figures": "answer figures not traceable", "unit_scale_errors": "unit/scale errors",
          "oos_refused_no_citation": "out-of-scope refused, no citation",
          "answerable_refused": "answerable refused", "evidence_line_holds_gold": "evidence line holds the gold figure",
          "latency_s": "end to end p50 / p90 s"}


def _cell(fig: dict, name: str) -> str:
    if name == "latency_s":
        return f"{fig['p50']} / {fig['p90']}" if fig.get("p50") is not None else "n/a"
    if fig.get("value") is None:
        return "n/a"
    extra = f", {fig['not_judged']} not judged" if fig.get("not_judged") else ""
    return f"{fig['value']} ({fig['k']} of {fig['n']}{extra})"


def _mean_cell(fig: dict, name: str) -> str:
    value = fig.get("p50" if name == "latency_s" else "value")
    return "n/a" if value is None else f"{value} ({fig['folds']} companies)"


def report(set_name: str, rows: list[dict], fold_view: dict, note: str) -> str:
    md = [f"# Answers a reader can check: set `{set_name}`", "", note, "",
          "| figure | all questions | held-back folds (mean over companies) | tuned-on folds | target |",
          "|---|---|---|---|---|"]
    for name, label in LABELS.items():
        md.append(f"| {label} | {_cell(fold_view['all'][name], name)} | "
                  f"{_mean_cell(fold_view['held_back_mean'].get(name, {}), name)} | "
                  f"{_mean_cell(fold_view['tuned_on_mean'].get(name, {}), name)} | {TARGETS[name]} |")
    md += ["", "Per company (its own questions; held back: no choice in the run's tunables was made on it):", "",
           "| company | held back | questions | figure correct | correct, all | untraced | scale errors | "
           "out-of-scope refused | answerable refused | p50 s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for company, f in fold_view["companies"].items():
        md.append(f"| {company} | {'yes' if f['held_back'] else 'no'} | {f['questions']} | "
                  f"{_cell(f['figure_correct'], 'x')} | {_cell(f['correct_all'], 'x')} | "
                  f"{_cell(f['untraced_figures'], 'x')} | {_cell(f['unit_scale_errors'], 'x')} | "
                  f"{_cell(f['oos_refused_no_citation'], 'x')} | {_cell(f['answerable_refused'], 'x')} | "
                  f"{f['latency_s']['p50']} |")
    oos = [r for r in rows if r["set"] == "oos"]
    if oos:
        md += ["", "Out-of-scope questions by kind:", "", "| kind | refused, no citation | refused, cited | "
               "answered |", "|---|---|---|---|"]
        for kind in OOS_KINDS:
            rs = [r for r in oos if r["kind"] == kind]
            md.append(f"| {kind} | {sum(r['refused_no_citation'] for r in rs)} of {len(rs)} | "
                      f"{sum(r['refused'] and r['cited'] for r in rs)} | {sum(not r['refused'] for r in rs)} |")
    return "\n".join(md)


# -- running --------------------------------------------------------------------------------------
@dataclass
class Graph:
    """The graph as this eval asks it: who asks, their filings, and one call per question."""

    owner_id: int
    user: str
    documents: dict[str, str]  # filing name without .pdf -> document id
    ask: Callable[[str, list[str] | None, dict], tuple[dict, float]]


def open_graph(runtime: Runtime, user: str) -> Graph | None:
    """The graph as this eval asks it, over the eval's one runtime. None when `user` has no filings."""
    from graph.stream import run_config, run_graph
    from storage.documents import ready_documents
    from storage.users import find_user

    with runtime.database.connection() as conn:
        owner_id = find_user(conn, user)
        if owner_id is None:
            return None
        docs = {name.removesuffix(".pdf"): str(i) for name, i in ready_documents(conn, owner_id=owner_id).items()}

    def ask(question: str, doc_ids: list[str] | None, tunables: dict) -> tuple[dict, float]:
        config = run_config(owner_id=owner_id, user=user, tunables={"web_search": False, **tunables})
        inputs: dict[str, Any] = {"question": question, **({"document_ids": doc_ids} if doc_ids else {})}
        started = time.perf_counter()
        *_events, (_done, outcome) = run_graph(inputs, config, runtime)
        seconds = time.perf_counter() - started
        # every field the outcome has, so a verification report or evidence lines are scored once they exist
        return {**dataclasses.asdict(outcome), **outcome.summary()}, seconds

    return Graph(owner_id, user, docs, ask)


def chain_judge(runtime: Runtime) -> Judge:
    """evals/scoring.py's judge asked through the runtime's provider chain (LLM_ORDER)."""
    from evals.quality import judge

    chain = runtime.chain()
    return lambda question, reference, answer: judge(chain, question, reference, answer)[0]


def chosen_items(args: argparse.Namespace) -> list[Item]:
    if args.set == "dev":
        items = dev_items(args.questions)
    elif args.set == "oos":
        oos = oos_items(args.out_of_scope)
        by_kind = interleave(*[[i for i in oos if i.kind == k] for k in OOS_KINDS])
        items = by_kind if args.without_answerable else interleave(by_kind, dev_items(args.questions))
    else:
        items = synthetic_items(args.synthetic)
        by_filing: dict[str, list[Item]] = {}
        for item in items:
            by_filing.setdefault(item.doc_name or "", []).append(item)
        items = interleave(*by_filing.values())  # a --limit reads every filing, not the first few
    return items[: args.limit] if args.limit else items


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", choices=["dev", "oos", "synthetic"], default="dev")
    p.add_argument("--home", type=Path, default=None, help="THOTQEN_HOME holding --user's ingested filings")
    p.add_argument("--user", default="bench")
    p.add_argument("--limit", type=int, default=0, help="questions to ask (0: all)")
    p.add_argument("--config", default="{}", help="tunables for every run as JSON, e.g. '{\"top_k\": 3}'")
    p.add_argument("--fold-configs", type=Path, default=None,
                   help="JSON {company: tunables chosen without it}: each company's questions run under its own")
    p.add_argument("--tuned-on", default="", help="companies --config was tuned on (comma-separated)")
    p.add_argument("--scope", choices=["document", "all"], default=None,
                   help="answerable questions within their filing or across all (default: all for oos, else document)")
    p.add_argument("--tolerance", type=float, default=0.02, help="relative tolerance where no rounding is asked")
    p.add_argument("--judge", choices=["chain", "none"], default="chain", help="who scores prose references")
    p.add_argument("--questions", type=Path, default=FINANCEBENCH / "questions.jsonl")
    p.add_argument("--out-of-scope", type=Path, default=OUT_OF_SCOPE,
                   help="the out-of-scope questions (evals/data/out_of_scope_holdout.jsonl: written later, held back)")
    p.add_argument("--without-answerable", action="store_true",
                   help="--set oos: the out-of-scope questions alone, not interleaved with the answerable ones")
    p.add_argument("--synthetic", type=Path, default=SYNTHETIC)
    p.add_argument("--rows", type=Path, default=None, help="JSONL rows are appended to (default /tmp/...)")
    p.add_argument("--resume", action="store_true", help="keep rows already in --rows")
    p.add_argument("--name", default=None, help="result name under evals/results/ (default answers_<set>)")
    p.add_argument("--results-dir", default=None, help=argparse.SUPPRESS)  # tests write elsewhere
    p.add_argument("--note", default="")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("LLM_ORDER", "local")
    os.environ.setdefault("WEB_SEARCH", "false")
    runtime = eval_runtime(args.home)
    graph = open_graph(runtime, args.user)
    if graph is None:
        print(f"no user {args.user!r} under THOTQEN_HOME; ingest the development filings first", file=sys.stderr)
        return 2
    from graph import prompts

    base = json.loads(args.config)
    per_fold = json.loads(args.fold_configs.read_text()) if args.fold_configs else {}
    tuned_on = {c.strip() for c in args.tuned_on.split(",") if c.strip()}
    judge = chain_judge(runtime) if args.judge == "chain" else None

    scope = args.scope or ("all" if args.set == "oos" else "document")
    rows_path = args.rows or Path(f"/tmp/thotqen-answers-{args.set}.jsonl")
    rows = resumable_rows(rows_path, args.resume)
    done = {r["id"] for r in rows}
    items = chosen_items(args)
    for item in items:
        if item.id in done:
            continue
        if item.doc_name and item.doc_name not in graph.documents:
            print(f"skip {item.id}: {item.doc_name} is not ingested for {args.user}", file=sys.stderr)
            continue
        doc_ids = [graph.documents[item.doc_name]] if item.doc_name and scope == "document" else None
        tunables = {**base, **per_fold.get(item.company or "", {})}
        out, seconds = graph.ask(item.question, doc_ids, tunables)
        row = score(item, out, seconds, tol=args.tolerance, judge=judge,
                    refusal_texts=(prompts.CANNOT_ANSWER, prompts.REFUSAL))
        rows.append(row)
        append_row(rows_path, row)
        print(f"{len(rows)}/{len(items)} {item.id} correct={row.get('correct')} refused={row['refused']} "
              f"cited={row['cited']} untraced={row['untraced']}/{row['figures']} {row['total_s']}s", file=sys.stderr)
    tuned = tuned_on - set(per_fold)  # a company with its own fold's tunables is held back by construction
    view = folds(rows, tuned)
    where = "within their filing" if scope == "document" else "across all filings"
    note = (f"{len(rows)} questions ({args.set}; answerable ones {where}). "
            f"LLM_ORDER={os.environ.get('LLM_ORDER')}; tunables `{json.dumps(base)}`"
            f"{'; per-company tunables from ' + str(args.fold_configs) if per_fold else ''}; "
            f"tuned on: {', '.join(sorted(tuned)) or 'none declared'}; judge: {args.judge}; tolerance "
            f"{args.tolerance:.0%} where no rounding is asked. {args.note}").rstrip()
    md = report(args.set, rows, view, note)
    payload = {"set": args.set, "scope": scope, "tunables": base, "fold_configs": per_fold,
               "tuned_on": sorted(tuned), "judge": args.judge, "tolerance": args.tolerance,
               "llm_order": os.environ.get("LLM_ORDER"), "folds": view,
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "rows": rows}
    write_result(args.name or f"answers_{args.set}", payload, md,
                 directory=Path(args.results_dir) if args.results_dir else None)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
