"""How filings write a number, its sign, currency and scale: the rules both readers share.

A table's cells are read at ingestion (ingestion/numbers.py) and the figures of excerpts and
answers in the graph (graph/figures.py); graph and ingestion are one layer and may not import each
other (tests/test_structure.py), so what both need to agree on lives here: what the digits of a
number look like ("1,234.5"), which signs make it negative (a minus, an en dash, accounting
parentheses), which currency a sign names, what a scale word multiplies by, which header scales a
table ("(in thousands)", "(000s)", "(%)"), and which row labels a header never scales (per share,
percentages, ratios).
"""

from __future__ import annotations

import re
from typing import Literal

from lexicon import PER_SHARE_LABEL, PERCENT_LABEL, RATIO_LABEL

# The digits of one number: thousands separators, decimals, or a bare decimal (".5").
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
SIGN = r"[-−–]"  # a minus as typed, as typeset, and the en dash PDFs print for it
CURRENCY_SIGNS = {"US$": "USD", "C$": "CAD", "A$": "AUD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_SIGN = "|".join(re.escape(s) for s in sorted(CURRENCY_SIGNS, key=len, reverse=True))
# the headers that scale a table and the labels it never scales: lexicon.py (HEADER_000, PER_SHARE_LABEL, ...)


Unscaled = Literal["percent", "per_share", "ratio"]


def unscaled_kind(label: str, where: str = "", *, percent_header: bool = False) -> Unscaled | None:
    """What a row's numbers are when its label (or a "(%)" header) says it, never scaled by the
    table's header: percentages, per-share amounts (`where`: the label with its section path, as
    "Per share data Diluted"), ratios; None for amounts and counts."""
    if percent_header or PERCENT_LABEL.search(label):
        return "percent"
    if PER_SHARE_LABEL.search(where or label):
        return "per_share"
    if RATIO_LABEL.search(label):
        return "ratio"
    return None


def negative(sign: str | None, opened: bool, closed: bool) -> bool:
    """A minus sign, or the accounting parentheses around the number: "(1,234)" is -1,234."""
    return bool(sign) or (opened and closed)
