"""Cheap/complex routing of a question, by rules: no model call, microseconds per question.

    classify(question) -> "cheap" | "complex"
    explain(question)  -> (label, the signals that decided it)

"complex" means the answer needs reasoning beyond reading one value off a page: arithmetic
(ratios, margins, growth, averages), comparing periods or items, judging, explaining causes,
summarising, several questions in one. Those go to the strongest link (NVIDIA's 70B). Anything
else is "cheap" (a single lookup, small talk, a short follow-up) and skips that hop
(LLM_CHEAP_SKIP). Accuracy on evals/data/route_questions.jsonl: evals/results/classifier.md.
"""

from __future__ import annotations

import re
from typing import Literal

Label = Literal["cheap", "complex"]

_WORDS = {
    # arithmetic and derived metrics
    "compute": r"\b(calculat\w*|comput\w*|defined as|round(ed)? (your|the|to)|formula)\b",
    "metric": r"\b(ratio|margin|growth|grow|grew|rate|average|avg|cagr|turnover|percent(age)?|%|"
              r"days (payable|sales|inventory)|dpo|dso|dio|conversion cycle|coverage|yield|"
              r"free cash flow|fcf|working capital|per cent|share of|proportion|as a % of)\b",
    # comparison and change
    "compare": r"\b(compar\w*|versus|vs\.?|relative to|differen\w*|change[ds]?|chang\w*|"
               r"increas\w*|decreas\w*|declin\w*|improv\w*|worse|better|rise|rose|fall|fell|drop\w*|"
               r"trend\w*|consisten\w*|fluctuat\w*|stayed|higher|lower|more than|less than)\b",
    # judgement, causes, synthesis
    "reason": r"\b(why|drove|drive[rsn]?|driving|caus\w*|explain\w*|assess\w*|evaluat\w*|analy[sz]\w*|"
              r"implication\w*|impact\w*|affect\w*|effect of|healthy|intensive|sustainab\w*|"
              r"should|would you|risk\w*|outlook|summar\w*|pros and cons|strateg\w*|"
              r"excluding|exclude|adjusted for|held back|dragged)\b",
}
_PATTERNS = {name: re.compile(rx, re.IGNORECASE) for name, rx in _WORDS.items()}
# case-sensitive, so names such as "Best Buy" or "Most Valuable" are not superlatives
_PATTERNS["superlative"] = re.compile(r"\b(most|least|highest|lowest|largest|smallest|best|worst|biggest)\b")
_PERIOD = re.compile(r"\b(?:FY\s?'?\d{2,4}|Q[1-4]\s?(?:FY)?\s?\d{0,4}|(?:19|20)\d{2})\b", re.IGNORECASE)
_LIST_AND = re.compile(r"\band\b.*\?|,.*\band\b", re.IGNORECASE)


def _periods(question: str) -> set[str]:
    return {re.sub(r"\W", "", m.group(0)).upper() for m in _PERIOD.finditer(question)}


def explain(question: str) -> tuple[Label, list[str]]:
    """The label and the signals behind it (empty for a plain lookup)."""
    q = " ".join(question.split())
    signals = [name for name, pattern in _PATTERNS.items() if pattern.search(q)]
    periods = _periods(q)
    if len(periods) >= 2:
        signals.append("several periods")
    if q.count("?") >= 2:
        signals.append("several questions")
    elif len(periods) >= 1 and _LIST_AND.search(q) and ("compare" in signals or "metric" in signals):
        signals.append("list")
    if len(q.split()) > 45:
        signals.append("long")
    return ("complex" if signals else "cheap"), signals


def classify(question: str) -> Label:
    """"cheap" or "complex"; see the module docstring."""
    return explain(question)[0]
