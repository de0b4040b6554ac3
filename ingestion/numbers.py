"""Numbers as financial tables write them: a cell's value, and the scale and unit its table states.

A statement cell is written "1,234", "(1,234)" (a negative, the accounting way), "$ 1,234",
"12.5%", "(0.7)%" or a dash ("—", "-": nothing to report, read as zero). A table's scale is said
once, in its caption or the corner of its header: "(In thousands)", "(Millions, except per share
amounts)", "Dollars in millions", "$ and shares in millions", "(000s)", "(%)". "Except per share"
leaves per-share rows unscaled; "except share and per share data" leaves share counts unscaled too.

What a number, a sign, a currency, a scale word and an unscaled row look like is declared once in
storage/numbers.py, which the graph's figure reading (graph/figures.py) shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lexicon import HEADER_000, HEADER_PERCENT, SCALE_WORD, SCALES
from lexicon import PER_SHARE_LABEL as PER_SHARE
from storage.numbers import (
    CURRENCY_SIGN,
    CURRENCY_SIGNS,
    NUMBER,
    SIGN,
    negative,
    unscaled_kind,
)

# One value: an optional sign or parenthesis, a currency sign, the digits, a percent sign.
_VALUE = re.compile(
    rf"(?P<open>\()?\s*(?P<sign>{SIGN})?\s*(?P<cur>{CURRENCY_SIGN})?\s*(?P<open2>\()?\s*"
    rf"(?P<num>{NUMBER})"
    r"(?!\w)(?:\s*(?P<pct>%))?(?:\s*(?P<close>\)))?(?:\s*(?P<pct2>%))?")
_DASH = re.compile(r"^[—–―-]+$")
_WRITTEN_CURRENCY = re.compile(rf"(?:{CURRENCY_SIGN})\s*")
# A scale as a caption states it: after "(", "in", "dollars", "$" or "amounts" (not prose's "3 million units").
_SCALE = re.compile(r"(?:^|[(\[,;:]|\bin\b|\bdollars\b|\$|€|£|\bamounts\b|\busd\b|\beur\b)\s*"
                    rf"(?:[\w$€£,]+\s+){{0,3}}?(?P<word>{SCALE_WORD})\b", re.I)
_EXCEPT = re.compile(r"\bexcept\b(?P<rest>.*)", re.I)
_SHARES = re.compile(r"\bshares?\b", re.I)


@dataclass(frozen=True)
class Value:
    text: str  # as written ("(1,234)", "—", "12.5%")
    number: float  # the sign applied; a dash is 0
    percent: bool = False
    currency: str = ""  # "USD" when the cell carries "$"
    start: int = 0  # where it stands in the text it was read from
    end: int = 0


def read_values(text: str) -> list[Value]:
    """Every value written in `text` (a cell of a table row), left to right; a lone dash is a zero."""
    stripped = text.strip()
    if _DASH.match(stripped):
        return [Value(stripped, 0.0, start=text.find(stripped), end=text.find(stripped) + len(stripped))]
    found = []
    for m in _VALUE.finditer(text):
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        before = text[max(0, start - 1):start]
        after = text[m.end():m.end() + 2]
        if (before and (before.isalnum() or before in ".,")) or re.match(r"-?[A-Za-z]", after):
            continue  # inside a word or a name ("10-K", "3M", "COVID-19")
        minus = negative(m.group("sign"), bool(m.group("open") or m.group("open2")), bool(m.group("close")))
        number = float(m.group("num").replace(",", ""))
        written = _WRITTEN_CURRENCY.sub("", m.group(0)).strip()  # the currency is the unit's
        if (m.group("open") or m.group("open2")) and not m.group("close"):
            written = written.lstrip("( ")  # "(" opened something else, not this number
        written = re.sub(r"\(\s+", "(", written)
        found.append(Value(written, -number if minus else number, bool(m.group("pct") or m.group("pct2")),
                           CURRENCY_SIGNS.get(m.group("cur") or "", ""), start, m.end()))
    # a dash standing alone among values ("21 - 21 -" in one cell) is a zero of its own column
    for m in re.finditer(r"(?<!\S)[—–―-]+(?!\S)", text):
        found.append(Value(m.group(0), 0.0, start=m.start(), end=m.end()))
    return sorted(found, key=lambda v: v.start)


def is_value_text(text: str) -> bool:
    """The whole of `text` is values (and currency signs): a value cell, not a label."""
    rest = text
    for v in read_values(text):
        rest = rest.replace(v.text, " ", 1)
    return bool(read_values(text)) and not re.sub(r"[\s%()]", "", _WRITTEN_CURRENCY.sub("", rest))


@dataclass(frozen=True)
class TableScale:
    """What a table's caption and header say about all its numbers."""

    scale: float = 1.0  # 1e3 for "(In thousands)"
    words: str = ""  # the phrase as written ("in millions, except per share amounts")
    currency: str = ""  # USD, EUR, ... when the caption or cells say so
    percent: bool = False  # the whole table is in percent ("(%)")
    shares_unscaled: bool = False  # "except share and per share data"


def read_scale(texts: list[str]) -> TableScale:
    """The scale, currency and exceptions stated by a table's caption rows and header corner."""
    scale, words, currency, percent, shares_unscaled = 1.0, "", "", False, False
    for text in texts:
        if len(text) > 160:
            continue  # prose, not a caption
        m = _SCALE.search(text)
        if m and scale == 1.0:
            # the caption's phrase, not the sentence or the header row around it
            phrase = re.split(r"[()|]", text[m.start():].lstrip("( "))[0]
            scale, words = SCALES[m.group("word").lower()], phrase.strip(" (),:;[")
            rest = _EXCEPT.search(phrase)
            if rest:
                exempt = PER_SHARE.sub(" ", rest.group("rest"))
                shares_unscaled = bool(_SHARES.search(exempt))
        elif scale == 1.0 and HEADER_000.search(text):
            scale, words = 1e3, text.strip(" ()|")
        if HEADER_PERCENT.search(text):
            percent = True
        if not currency:
            if re.search(r"\$|\bdollars?\b|\busd\b", text, re.I):
                currency = "USD"
            elif re.search(r"€|\beuros?\b", text, re.I):
                currency = "EUR"
            elif re.search(r"£|\bpounds?\s+sterling\b", text, re.I):
                currency = "GBP"
    return TableScale(scale, words, currency, percent, shares_unscaled)


def cell_unit(label: str, section: tuple[str, ...], value: Value, table: TableScale) -> tuple[float, str]:
    """(scale, unit) of one cell: the table's scale, except per-share amounts, percentages and
    ratios (never scaled), and share counts where the caption exempts them."""
    where = " ".join((*section, label))
    currency = value.currency or table.currency
    kind = "percent" if value.percent else unscaled_kind(label, where, percent_header=table.percent)
    if kind == "percent":
        return 1.0, "%"
    if kind == "per_share":
        return 1.0, f"{currency or 'currency'}/share"
    if kind == "ratio":
        return 1.0, "ratio"
    if _SHARES.search(where) and not re.search(r"\b(?:equity|capital|stock|value|repurchase[sd]?)\b", label, re.I):
        return (1.0 if table.shares_unscaled else table.scale), "shares"
    return table.scale, currency
