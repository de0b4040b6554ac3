"""Composed answers: a figure question answered in sentences code writes from a fact or a calculation.

A question that asks for one figure ("What is the FY2018 capital expenditure (in USD millions)?",
"What is the FY2019 fixed asset turnover ratio?") gets its answer from the fact the model chose
or the calculation code did (graph/nodes/choose.py): "Purchases of property, plant and equipment
(FY2018) was $1,577 million [2]." The model picks; it never writes the digits or the sentence. A
question that asks for reasons, a comparison in words or a yes/no verdict is written by the model
(graph/nodes/generate.py) over the same facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from typing import Any

from graph.calc import Fact, choose_op
from graph.facts import asks_for_figure, label_words, shown_value
from graph.figures import Asked
from lexicon import FIGURE_VERDICT, METRIC_ASKED, METRIC_END, PROSE_ASKED

# The question's own clause: FinanceBench-style prompts wrap it in instructions ("Answer the
# following question as if you are an analyst ...: what is ...? Round to two decimals.").
_CLAUSE_START = re.compile(r"(?:^|[.:;!]\s+|\n)")

_POSSESSIVE_NAME = re.compile(r"^[A-Z0-9][\w&.-]*['’]s?$")


def asked_clause(question: str) -> str:
    """The sentence that holds the question mark (the whole text when none does)."""
    head = (question or "").split("?", 1)[0]
    starts = [m.end() for m in _CLAUSE_START.finditer(head)]
    return head[starts[-1]:].strip() if starts else head.strip()


def wants_one_figure(question: str) -> bool:
    """The question asks for a figure and nothing else: a lookup or a calculation, not a verdict or reasons."""
    clause = asked_clause(question)
    return asks_for_figure(question) and not FIGURE_VERDICT.search(clause) and not PROSE_ASKED.search(clause)


def wants_a_calculation(question: str) -> bool:
    return choose_op(question) is not None


def metric_of(question: str, ignore: Set[str] = frozenset()) -> str:
    """What the question calls the figure ("FY2019 fixed asset turnover ratio"), or "" when it does not say."""
    m = METRIC_ASKED.search(asked_clause(question))
    if not m:
        return ""
    metric = METRIC_END.sub("", m.group("m")).strip(" ,.:;'\"")
    # a possessive name ("Northwind's", "3M's") says whose figure, as do the company's own words
    words = [w for w in metric.split() if not _POSSESSIVE_NAME.match(w)
             and not ((own := label_words(w)) and own <= ignore)]
    metric = " ".join(words)
    return metric if label_words(metric) else ""


def fact_sentence(fact: Fact, asked: Asked) -> str:
    """One fact as a sentence: its row, its period, its value in the asked unit and its citation."""
    row = (fact.label.split(" › ")[-1].strip() or fact.label).rstrip(" .:;")
    mark = f" [{fact.source}]" if fact.source else ""
    period = f" ({fact.period})" if fact.period else ""  # a form's or a list's value has none: no "()"
    return f"{row}{period} was {shown_value(fact, asked)}{mark}."


def calculation_answer(question: str, calculation: Mapping[str, Any], ignore: Set[str] = frozenset()) -> str:
    """The calculation's result as the answer's sentence, then its working."""
    marks = "".join(f"[{n}]" for n in calculation.get("markers") or [])
    metric = metric_of(question, ignore)
    subject = f"The {metric}" if metric and not metric.lower().startswith("the ") else (metric or "The result")
    head = f"{subject[0].upper()}{subject[1:]} is {calculation['text']} {marks}".strip()
    return f"{head}.\n\nCalculation: {calculation['working']}"
