"""Which facts a calculation uses: the question's own words name its operands.

A question that asks for a calculation (graph/calc.py `choose_op`) says what goes where: "A
divided by B", "the ratio of A to B", "A as a percentage of B", "defined as: A / B", a margin
("gross margin": gross profit over revenue), or one line item across periods ("growth in
revenue from 2021 to 2022"). `phrases` splits the question into its operands' phrases (what
figure lookup searches for); `choose` maps each phrase to the fact whose row label and period fit
it best. No match, no calculation: the answer then rests on the facts alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set

from graph.calc import Fact, Request
from graph.facts import label_words
from lexicon import (
    ANSWER_IN_PERCENT,
    ARITHMETIC,
    AVERAGE_WORD,
    DAYS_FACTOR,
    DEFINED_AS,
    DIVIDED_BY,
    MARGIN_NAMES,
    PERCENT_RATE_OR_MARGIN,
    RATIO_OF,
)
from storage.question_period import asked_period
from storage.statements import named_statements, preference

# Operands of a margin the question names only by the margin's name.
MARGIN_PARTS = MARGIN_NAMES
REVENUE = "total revenue net sales revenues"
_TWO_OPERANDS = ("ratio", "percentage", "margin", "per_share", "days")
_SAME_ROW = ("growth", "difference", "cagr", "sum", "average")


def _clause(question: str) -> str:
    """The part of the question that names the operands."""
    if m := DEFINED_AS.search(question):
        return m.group("rest") or m.group("rest2")
    if m := RATIO_OF.search(question):
        return m.group("rest")
    return question


def phrases(question: str, op: str) -> list[str]:
    """The operands' phrases in the operation's order; [] when the question does not say them."""
    if op == "margin" or (op in ("ratio", "percentage") and not DIVIDED_BY.search(_clause(question))):
        for pattern, numerator in MARGIN_PARTS:
            if pattern.search(question):
                return [numerator, REVENUE]
    if op in _TWO_OPERANDS or op == "turnover":
        parts = [p for p in DIVIDED_BY.split(_clause(question).split("?")[0], maxsplit=1) if p and p.strip()]
        if len(parts) == 2 and all(label_words(p) for p in parts):
            return [p.strip(" .:()") for p in parts]
        return []
    if op in _SAME_ROW:
        return [question]
    return []



def names_a_rate(phrase: str) -> bool:
    """The phrase names a percentage row (a margin, a rate), not an amount to be shown as a percentage."""
    # the words saying how the answer is written ("as a %", "growth rate") say nothing of the row
    return bool(PERCENT_RATE_OR_MARGIN.search(ANSWER_IN_PERCENT.sub(" ", phrase)))


def beyond_closed_set(question: str, op: str) -> bool:
    """The question's formula has more arithmetic than `op` does. Formulas beyond the closed set ("365 *
    (average AP) / (COGS + change in inventory)", "3 year average of capex as a % of revenue") computed as
    a plain ratio would show a wrong figure with a right-looking working, so there is no calculation and
    the answer says which figure is missing."""
    formula = ""
    if m := DEFINED_AS.search(question):
        formula = re.split(r"\.\s|\?", m.group("rest") or m.group("rest2"))[0]
    if op == "days":
        formula = DAYS_FACTOR.sub("", formula)
    if op not in ("sum", "difference") and ARITHMETIC.search(formula):
        return True
    return op in ("ratio", "percentage", "margin", "days") and bool(AVERAGE_WORD.search(question))


def _fit(fact: Fact, words: set[str], years: tuple[int, ...], percent_ok: bool = True,
         named: Set[str] = frozenset()) -> float:
    if fact.figure.kind == "percent" and not percent_ok:
        return 0.0  # an operand the question names as an amount is not a percentage row
    label = label_words(fact.label)
    shared = len(label & words)
    if not shared:
        return 0.0
    value = shared / max(len(label), 1) + shared / max(len(words), 1) + preference(fact.statement, named)
    if years:
        value += 1.0 if fact.year in years else -1.0
    return value


def _best(facts: Sequence[Fact], phrase: str, years: tuple[int, ...], taken: set[int],
          ignore: Set[str] = frozenset(), named: Set[str] = frozenset()) -> Fact | None:
    words = label_words(phrase) - ignore
    percent_ok = names_a_rate(phrase) and phrase != REVENUE
    scored = [(_fit(f, words, years, percent_ok, named), f) for f in facts if f.n not in taken]
    scored = [(s, f) for s, f in scored if s > 0]
    # equal fit: the larger amount is the total ("Net sales" of the company, not of a segment)
    return max(scored, key=lambda t: (round(t[0], 6), abs(t[1].figure.value)))[1] if scored else None


def choose(question: str, op: str, facts: Sequence[Fact], ignore: Set[str] = frozenset()) -> Request | None:
    """The request that computes what `question` asks from `facts`, or None when the operands are not there;
    `ignore` holds the words that name the company (graph/facts.py `pick`)."""
    if beyond_closed_set(question, op):
        return None
    period = asked_period(question)
    years = period.years
    named = named_statements(question)
    if op in _TWO_OPERANDS:
        parts = phrases(question, op)
        if len(parts) != 2:
            return None
        taken: set[int] = set()
        chosen = []
        for part in parts:
            own = asked_period(part).years or years[-1:]
            fact = _best(facts, part, own, taken, ignore, named)
            if fact is None:
                return None
            taken.add(fact.n)
            chosen.append(fact.n)
        return Request(op=op, operands=chosen)  # type: ignore[arg-type]
    if op == "turnover":
        parts = phrases(question, op)
        if len(parts) != 2 or not years:
            return None
        numerator = _best(facts, parts[0], years[-1:], set(), ignore, named)
        later = _best(facts, parts[1], years[-1:], set(), ignore, named)
        earlier_years = (years[0],) if len(years) > 1 else (years[-1] - 1,)
        earlier = _best(facts, parts[1], earlier_years, {later.n} if later else set(), ignore, named)
        if not (numerator and later and earlier) or earlier.year == later.year:
            return None
        return Request(op="turnover", operands=[numerator.n, earlier.n, later.n])
    if op in _SAME_ROW:
        best = _best(facts, question, (), set(), ignore, named)
        if best is None:
            return None
        row = sorted((f for f in facts if f.label == best.label and f.year is not None), key=lambda f: f.year or 0)
        by_year: dict[int, Fact] = {}
        for f in row:
            by_year.setdefault(f.year or 0, f)
        wanted = [by_year[y] for y in sorted(years) if y in by_year] if len(years) >= 2 else list(by_year.values())[-2:]
        if len(wanted) < 2:
            return None
        if op in ("growth", "difference", "cagr"):
            wanted = [wanted[0], wanted[-1]]
            if op == "difference":
                wanted = [wanted[1], wanted[0]]  # later minus earlier
        return Request(op=op, operands=[f.n for f in wanted])  # type: ignore[arg-type]
    return None
