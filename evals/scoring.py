"""The evals' metrics, each written once.

Shares: `fraction`, `share`, `share_value` (k of n, rounded to three places, None over none).
Retrieval: the rank of each question's first right result (`first_rank`; an evidence page of the
question's filing: `first_hit_rank`; the filing itself: `filing_rank`), and hit@k and MRR over those
ranks (`hit_at`, `mrr`, `rank_scores`). Answers, per question and with no model: numeric
correctness, refusal (`is_refusal`, `is_refusal_text`), citation precision, number grounding; plus
the judge's prompt and verdict schema for answers numbers cannot settle. Latency: `percentile`
(linear, or the exclusive method of `statistics.quantiles`), `nearest_rank`.

Pure functions over plain dicts (a graph OutputState and a FinanceBench question), so tests can
pin every rule. FinanceBench's evidence_page_num is 0-based; citation pages are 1-based.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from graph.claims import DECLINES
from graph.figures import Figure, asked_unit, read_figures

Hit = TypeVar("Hit")

_WORD = re.compile(r"[A-Za-z]+")
# Words that may sit around a bare figure without making the answer prose ("$1577.00 million USD").
_FILLER = {"usd", "us", "dollars", "dollar", "million", "millions", "billion", "billions", "thousand", "percent",
           "mn", "bn", "m", "b", "k", "x", "times", "approximately", "about", "roughly", "fy", "per", "share"}


def fraction(k: float, n: int, digits: int | None = 3) -> float | None:
    """`k` of `n` as a share, rounded to `digits` places (None: unrounded); None over none."""
    if not n:
        return None
    return k / n if digits is None else round(k / n, digits)


def share(k: int, n: int) -> dict:
    """{"k", "n", "share"}: a count and its share, as most result files write one."""
    return {"k": k, "n": n, "share": fraction(k, n)}


def share_value(k: int, n: int) -> dict:
    """{"value", "k", "n"}: the same, as the answers harness (answers.py, genre.py) writes it."""
    return {"value": fraction(k, n), "k": k, "n": n}


def first_rank(hits: Iterable[Hit], right: Callable[[Hit], bool]) -> int | None:
    """The 1-based rank of the first hit `right` accepts; None when none is."""
    return next((rank for rank, hit in enumerate(hits, 1) if right(hit)), None)


def first_hit_rank(hits: Iterable, doc_name: str, pages: set[int]) -> int | None:
    """The rank of the first search hit on an evidence page (1-based) of the question's filing
    (`doc_name` without .pdf)."""
    return first_rank(hits, lambda h: h.document_name == f"{doc_name}.pdf" and h.page in pages)


def filing_rank(hits: Iterable, doc_name: str) -> int | None:
    """The rank of the first hit from the question's filing, any page: "named filing first" is its hit@1."""
    return first_rank(hits, lambda h: h.document_name == f"{doc_name}.pdf")


def hit_at(ranks: Sequence[int | None], k: int, digits: int | None = None) -> float:
    """The share of questions whose first right result ranks within the top `k` (None: not found);
    0.0 over no questions. `digits`: rounded so, as the result tables show it."""
    share = sum(1 for r in ranks if r and r <= k) / len(ranks) if ranks else 0.0
    return share if digits is None else round(share, digits)


def mrr(ranks: Sequence[int | None], digits: int | None = None) -> float:
    """Mean reciprocal rank of the first right result (a miss counts 0); 0.0 over no questions."""
    mean = sum(1 / r for r in ranks if r) / len(ranks) if ranks else 0.0
    return mean if digits is None else round(mean, digits)


def rank_scores(ranks: Iterable[int | None], cuts: Iterable[int], digits: int | None = None) -> dict[str, float]:
    """{"hit@k" for each k in `cuts`, "mrr"} over the ranks."""
    ranks = list(ranks)
    return {**{f"hit@{k}": hit_at(ranks, k, digits) for k in cuts}, "mrr": mrr(ranks, digits)}


def percentile(values: Sequence[float], q: float, digits: int = 2,
               method: Literal["linear", "exclusive"] = "linear") -> float | None:
    """The q-th percentile (0 to 100); None over no values. "linear": between the two nearest
    samples (numpy's default, `statistics.quantiles`' inclusive method); "exclusive": the default
    method of `statistics.quantiles` (q a whole number; evals/retrieval.py's p95), which needs two
    values."""
    if not values:
        return None
    if method == "exclusive":
        return round(statistics.quantiles(values, n=100, method="exclusive")[int(q) - 1], digits)
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), digits)


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The sample nearest the q quantile (a fraction: 0.95), unrounded: the latency benchmarks' p95."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def parse_numbers(text: str) -> list[Figure]:
    """Every figure in `text` as graph/figures.py reads it (signs, parentheses, scale words, %),
    citation markers skipped; a standing-alone year is kept, since a reference may be one."""
    return read_figures(text or "", headers=False, years=True)


def candidates(figure: Figure, context_scale: float = 1.0) -> set[float]:
    """Magnitudes a figure may stand for: as written, scaled by its word, by the question's unit
    when it has no word, and a percent as a fraction."""
    v = abs(figure.number)
    out = {v, abs(figure.value)}
    if context_scale != 1.0 and figure.scale == 1.0:
        out.add(v * context_scale)
    if figure.kind == "percent":
        out.add(v / 100)
    return out


def question_scale(question: str) -> float:
    """The unit a question asks figures in ("in USD millions" -> 1e6); 1.0 when it names none."""
    return asked_unit(question).scale or 1.0


def close(a: float, b: float, rel_tol: float) -> bool:
    if a == b:
        return True
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)


def number_found(expected: Figure, found: list[Figure], rel_tol: float, scale: float = 1.0) -> bool:
    want = candidates(expected, scale)
    return any(close(a, b, rel_tol) for n in found for a in candidates(n, scale) for b in want)


def is_numeric_answer(expected: str, max_words: int = 3) -> bool:
    """A reference that is essentially figures ("$1577.00", "1.9%", "-3.7", "24.26 times").

    Those are scored by numbers alone; references with prose go to the judge.
    """
    found = parse_numbers(expected)
    if not found:
        return False
    rest, last = [], 0
    for figure in found:  # the reference with its figures (and their unit words) cut out
        rest.append(expected[last:figure.start])
        last = figure.end
    words = [w for w in _WORD.findall(" ".join([*rest, expected[last:]])) if w.lower() not in _FILLER]
    return len(words) <= max_words


def numeric_match(expected: str, answer: str, *, question: str = "", rel_tol: float = 0.02) -> bool | None:
    """True when every figure of the reference appears in the answer within `rel_tol` (relative).

    Signs are ignored (answers say "a decrease of 3.7%" for -3.7), a percent also matches its
    fraction (30.8% ~ 0.308), scale words are applied ($1.6 billion ~ 1,577 million), and a bare
    figure in a question asked "in USD millions" is read in millions. None when the reference has
    no figures.
    """
    want = parse_numbers(expected)
    if not want:
        return None
    found = parse_numbers(answer)
    scale = question_scale(question)
    return all(number_found(w, found, rel_tol, scale) for w in want)


def _opens_with(text: str, refusal_texts: Iterable[str]) -> bool:
    """`text` begins as one of the graph's refusal texts does (their first 40 characters)."""
    return any(text.startswith(r.strip()[:40]) for r in refusal_texts if r)


def is_refusal(answer: str | None, cited: list[int] | None, refusal_texts: tuple[str, ...] = ()) -> bool:
    """The graph's "cannot answer" / refusal text, or an answer that cites nothing."""
    text = (answer or "").strip()
    return not text or not cited or _opens_with(text, refusal_texts)


def is_refusal_text(answer: str, refusal_texts: Iterable[str] = ()) -> bool:
    """The graph's refusal texts, or a first sentence saying the documents do not answer (read as the
    product reads a declining answer: graph/claims.py's DECLINES); citations not looked at."""
    text = (answer or "").strip()
    if not text or _opens_with(text, refusal_texts):
        return True
    first = re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]
    return bool(DECLINES.search(first))


def evidence_pages(question: dict) -> set[tuple[str, int]]:
    """(document name without .pdf, 1-based page) of every evidence item."""
    return {(e["doc_name"], int(e["evidence_page_num"]) + 1) for e in question.get("evidence") or []}


def _doc(name: str | None) -> str:
    return (name or "").removesuffix(".pdf")


def cited_citations(out: dict) -> list[dict]:
    used = set(out.get("cited") or [])
    return [c for c in out.get("citations") or [] if c.get("n") in used]


def citation_precision(out: dict, question: dict) -> float | None:
    """Share of the citations the answer uses whose (document, page) holds evidence; None if none cited."""
    cited = cited_citations(out)
    if not cited:
        return None
    evidence = evidence_pages(question)
    return sum(1 for c in cited if (_doc(c.get("name")), c.get("page")) in evidence) / len(cited)


def numbers_grounded(answer: str, contexts: list[str], rel_tol: float = 0.0) -> float | None:
    """Share of the answer's figures that appear in the excerpts it was given (a cheap faithfulness).

    Years and other small integers are compared like any figure; a figure the model computed (a
    ratio, a growth rate) is not grounded by this measure even when right, so read it next to
    RAGAS faithfulness. None when the answer has no figures.
    """
    found = parse_numbers(answer)
    if not found:
        return None
    source = [n for ctx in contexts for n in parse_numbers(ctx)]
    return sum(1 for n in found if number_found(n, source, rel_tol)) / len(found)


# -- the judge --------------------------------------------------------------------------------
JUDGE_SYSTEM = (
    "You grade answers to questions about company filings against a reference answer. Be strict: "
    "the candidate is correct only if it states the same key facts and figures as the reference "
    "(rounding differences are fine, missing or different figures are not). A refusal or an answer "
    "that says information is missing is incorrect."
)
JUDGE_USER = (
    "Question: {question}\n\nReference answer: {reference}\n\nCandidate answer: {answer}\n\n"
    "Give a short reason first, then whether the candidate is correct (yes or no)."
)


class Verdict(BaseModel):
    """The judge's structured verdict (reason first, so the model thinks before it decides)."""

    reason: str = Field(max_length=400)
    correct: Literal["yes", "no"]


def judge_messages(question: str, reference: str, answer: str) -> list[tuple[str, str]]:
    return [("system", JUDGE_SYSTEM),
            ("human", JUDGE_USER.format(question=question, reference=reference, answer=answer))]
