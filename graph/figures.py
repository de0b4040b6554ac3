"""Figures as filings and answers write them: one reading of a number, its scale and its unit.

The graph (citations, calc, verify) and the scorer (evals/scoring.py) read figures here, so a
rule about what "(1,234)" or "$2,018mn" means is declared once; the digits, signs, currency signs,
scale words, thousand and percent headers and the rows a header never scales are storage/numbers.py's,
which the table cells' reader (ingestion/numbers.py) shares. A `Figure` keeps the number as
written and the scale it was read under, so "1,693,954" in a table headed "in thousands" and
"$1,693.954 million" in an answer are the same value, and the answer's rounding ("$1.69 billion")
decides how close they must be.

What is not a figure: citation markers ([1]), a year standing alone (1990-2099, "fiscal 2023";
"FY2022" is a word), note/item/page/section numbers, a day after a month name, numbers inside
words or hyphenated names ("3M", "10-K", "COVID-19", "401(k)").

A passage's scale comes from its header ("(in millions)", "(Millions, except per share amounts)",
"Dollars in thousands", "(000s)", "(%)"): it scales the bare numbers of the table lines after it
(or of its own line), never a figure with its own scale word, a percentage, a ratio, or a row whose
label says per share or percent ("Diluted earnings per share" under "in millions" is dollars).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from lexicon import (
    ASKED_CURRENCY,
    ASKED_DECIMALS,
    ASKED_NEAREST,
    ASKED_PERCENT,
    ASKED_POINTS,
    ASKED_SCALE,
    CARDINALS,
    GLUED_UNIT,
    HEADER_000,
    HEADER_PERCENT,
    HEADER_SCALE,
    MARK,
    MONEY_WORDS,
    MONTH_BEFORE,
    NEAREST,
    REFERENCE_BEFORE,
    SCALE_ABBREVIATION,
    SCALE_WORD,
    SCALE_WORDS,
    SCALES,
    letter_words,
)
from storage.numbers import (
    CURRENCY_SIGN,
    NUMBER,
    SIGN,
    negative,
    unscaled_kind,
)

Kind = Literal["money", "percent", "ratio", "count", "per_share"]

BASIS_POINT = 0.01  # in percentage points
# A figure rounded to fewer significant digits than this must equal its source exactly: "$2
# billion" would otherwise stand for anything from 1.5 to 2.5 billion.
MIN_ROUNDED_DIGITS = 2
EXACT_DECIMALS = 6  # how far a value is written when nothing asks for a rounding

_TOKEN = re.compile(rf"(?<![\w.,])(?:{NUMBER})")
_PREFIX = re.compile(rf"(?P<open>\()?\s?(?P<sign>{SIGN})?\s?(?P<cur>{CURRENCY_SIGN}|USD|EUR|GBP)?\s?"
                     rf"(?P<open2>\()?\s?(?P<sign2>{SIGN})?$")
# a percent sign begins no line after its number: a line of "%" separates entries ("... 26/10 1792\n%")
_SUFFIX = re.compile(
    r"(?:\s?(?P<pct>(?<!\n)%|percent(?:age)?\s+points?\b|per\s?cent\b|ppts?\b|pp\b|bps\b|basis\s+points?\b)"
    rf"|\s?(?P<scale>{SCALE_WORD}|{SCALE_ABBREVIATION})\b"
    r"|(?P<letter>[kmb])\b"
    r"|\s?(?P<times>x|times)\b)?"
    r"(?P<dollars>\s+(?:of\s+)?(?:u\.s\.\s+|us\s+)?(?:dollars|usd)\b)?"
    r"(?P<pershare>\s*(?:per|a|/)\s*(?:diluted\s+|basic\s+|common\s+|ordinary\s+)*share\b)?"
    r"(?P<close>\s?\))?", re.IGNORECASE)
_ATTACHED_AFTER = re.compile(r"[A-Za-z]|-[A-Za-z]|\(k\)|[.,]\d", re.IGNORECASE)


# What a question asks for.
_NUMBER_WORDS = {"no": 0, **CARDINALS}


@dataclass(frozen=True)
class Scale:
    """A table's or passage's scale and unit, read from its header ("(in thousands of U.S. dollars)")."""

    factor: float = 1.0
    money: bool = False  # the header names a currency
    percent: bool = False  # "(%)": the bare numbers under it are percentages
    text: str = ""  # the header as written
    start: int = 0  # where it sits in the passage


@dataclass(frozen=True)
class Figure:
    """One figure: the number as written and what it stands for.

    `value` is in base units: dollars for money and per-share figures, percentage points for
    percentages, the plain number for ratios and counts; its sign is applied (accounting
    parentheses and minus signs are negative).
    """

    number: float  # as written, sign applied: "(1,234)" -> -1234.0
    kind: Kind
    text: str = ""  # the span as written: "$(1,234)", "12.5%", "$3.21 per share"
    scale: float = 1.0  # what the written number is multiplied by: its own word, or its table's header
    scale_text: str = ""  # what the scale was read from: "million", "(in thousands)"; "" when none
    header: bool = False  # the scale came from the passage's header, not a word beside the number
    decimals: int = 0  # decimals as written: the rounding shown
    currency: bool = False
    points: bool = False  # percentage points or basis points: a difference between percentages
    start: int = 0
    end: int = 0

    @property
    def value(self) -> float:
        return self.number * self.scale

    @property
    def bare(self) -> bool:
        """No scale word beside it: an amount whose scale a header or a question supplies."""
        return self.kind in ("money", "count") and (self.header or self.scale == 1.0)

    @property
    def digits(self) -> str:
        """The magnitude as written, without separators or trailing zeros: "$1,577.00 million" -> "1577"."""
        shown = f"{abs(self.number):.{self.decimals}f}"
        return shown.rstrip("0").rstrip(".") if "." in shown else shown

    @property
    def significant_digits(self) -> int:
        """Digits that carry precision: "1.69" 3, "0.62" 2, "1,700" 2 (a whole number's trailing zeros are rounding)."""
        shown = f"{abs(self.number):.{self.decimals}f}"
        if not self.decimals:
            shown = shown.rstrip("0")
        return len(shown.replace(".", "").lstrip("0")) or 1

    @property
    def precision(self) -> int:
        """The decimal place it is rounded to: 2 for "1.69", 0 for "1,694", -2 for "1,700"."""
        if self.decimals:
            return self.decimals
        whole = f"{abs(self.number):.0f}"
        return -(len(whole) - len(whole.rstrip("0"))) if whole.strip("0") else 0

    @property
    def identifying(self) -> bool:
        """Names a fact rather than a small count: three digits or more, decimals, a currency or a unit."""
        return (len(self.digits.replace(".", "")) >= 3 or self.decimals > 0 or self.currency
                or self.kind != "count" or (self.scale != 1.0 and not self.header))

    def as_written(self) -> Figure:
        """The figure without its header's scale: the digits a reader sees in the table."""
        return replace(self, scale=1.0, scale_text="", header=False) if self.header else self

    def at_scale(self, scale: float, scale_text: str = "") -> Figure:
        """The same written number read under another scale (a question's unit, a misread header)."""
        return replace(self, scale=scale, scale_text=scale_text or SCALE_WORDS.get(scale, ""), header=False)


# -- reading -------------------------------------------------------------------------------------------------------
def _mask_markers(text: str) -> str:
    return MARK.sub(lambda m: " " * len(m.group(0)), text)


def _read_one(text: str, m: re.Match[str], years: bool) -> Figure | None:
    """The figure whose digits `m` matched, with its sign, currency and unit; None when it is not a figure."""
    start, end = m.span()
    raw = m.group(0)
    after = text[end:end + 60]
    before = text[max(0, start - 16):start]
    pre = _PREFIX.search(before)
    assert pre is not None  # every group is optional, so the empty suffix of `before` always matches
    base = start - len(before)
    sign_at = next((pre.start(g) for g in ("sign", "sign2") if pre.group(g)), None)
    if sign_at is not None and base + sign_at > 0 and text[base + sign_at - 1].isalnum():
        return None  # a hyphenated name or a range: "COVID-19", "2021-22", "pages 45-47"
    head = text[:base + pre.start()]
    currency = bool(pre.group("cur"))
    if not currency and REFERENCE_BEFORE.search(head):
        return None
    suf = _SUFFIX.match(after)
    assert suf is not None  # every group is optional
    decimals = len(raw.partition(".")[2])
    if suf.group("letter") and not (currency or decimals):
        return None  # "3M" is a name; "$3M" and "1.2B" are figures
    unit_end = max((suf.end(g) for g in ("pct", "scale", "letter", "times") if suf.group(g)), default=0)
    if not unit_end and _ATTACHED_AFTER.match(after) and not GLUED_UNIT.match(after):
        return None  # part of a word or a code: "2nd", "10-K", "401(k)", "1.2.3"; "100MB" is a figure
    number = float(raw.replace(",", ""))
    opened = bool(pre.group("open") or pre.group("open2"))
    minus = negative(pre.group("sign") or pre.group("sign2"), opened, bool(suf.group("close")))
    unit = (suf.group("pct") or suf.group("scale") or suf.group("letter") or "").lower()
    plain = not (currency or unit or suf.group("times") or suf.group("pershare") or minus or decimals)
    if plain and not years and "," not in raw and raw.isdecimal() and len(raw) == 4 and 1990 <= int(raw) <= 2099:
        return None
    if plain and len(raw) <= 2 and MONTH_BEFORE.search(head):
        return None  # "December 31"
    kind: Kind = "count"
    scale, points = 1.0, False
    if suf.group("pct"):
        kind, points = "percent", any(w in unit for w in ("point", "pp", "bps"))
        scale = BASIS_POINT if unit.startswith(("bps", "basis")) else 1.0
    elif suf.group("times"):
        kind = "ratio"
    elif suf.group("pershare"):
        kind = "per_share"
    elif currency or suf.group("dollars"):
        kind = "money"
    if unit in SCALES:
        scale = SCALES[unit]
    if kind == "per_share" and scale != 1.0:
        kind = "money"  # "$1.2 million per share" is not how per-share figures are written; keep the amount
    first = min([pre.start(g) for g in ("open", "sign", "cur", "open2", "sign2") if pre.group(g)
                 and (g not in ("open", "open2") or minus)], default=len(before))
    last = max(unit_end, suf.end("dollars") if suf.group("dollars") else 0,
               suf.end("pershare") if suf.group("pershare") else 0,
               suf.end("close") if suf.group("close") and opened else 0)
    span_start, span_end = base + first, end + last
    return Figure(number=-number if minus else number, kind=kind, text=text[span_start:span_end].strip(),
                  scale=scale, scale_text=unit if scale != 1.0 else "", decimals=decimals, currency=currency,
                  points=points, start=span_start, end=span_end)


def _raw_figures(text: str, years: bool) -> Iterator[Figure]:
    masked = _mask_markers(text)
    for m in _TOKEN.finditer(masked):
        figure = _read_one(masked, m, years)
        if figure is not None:
            yield replace(figure, text=text[figure.start:figure.end].strip())


def scale_of(header: str) -> Scale | None:
    """The scale a header or caption states: "(Millions, except per share amounts)" -> 1e6; None if none."""
    found = scales_in(header)
    return found[0] if found else None


def scales_in(text: str) -> list[Scale]:
    """Every header in a passage, in order."""
    found = [Scale(SCALES[m.group("word").lower()], bool(MONEY_WORDS.search(m.group(0))), False,
                   m.group(0).strip(), m.start()) for m in HEADER_SCALE.finditer(text)]
    found += [Scale(1e3, bool(MONEY_WORDS.search(m.group(0))), False, m.group(0).strip(), m.start())
              for m in HEADER_000.finditer(text)]
    found += [Scale(1.0, False, True, m.group(0).strip(), m.start()) for m in HEADER_PERCENT.finditer(text)]
    return sorted(found, key=lambda s: s.start)


def is_prose(line: str) -> bool:
    """A sentence rather than a table row: a header above a table does not scale the prose after it."""
    stripped = line.strip()
    return "|" not in stripped and stripped[-1:] in ".!?" and len(letter_words(stripped, 2)) >= 6


def _header_for(headers: list[Scale], pos: int, line: tuple[int, int], table_row: bool) -> Scale | None:
    earlier = [h for h in headers if h.start < pos]
    if earlier:
        return earlier[-1]
    same_line = [h for h in headers if line[0] <= h.start < line[1]]
    if same_line:
        return same_line[0]
    later = [h for h in headers if h.start >= pos]
    return later[0] if later and table_row else None


def _in_context(figure: Figure, label: str, header: Scale | None) -> Figure:
    """A bare number read under its row's label and its table's header."""
    if figure.kind not in ("money", "count") or figure.scale != 1.0:
        return figure
    unscaled = unscaled_kind(label, percent_header=header is not None and header.percent)
    if unscaled is not None:
        return replace(figure, kind=unscaled)
    if header is None or header.factor == 1.0:
        return figure
    kind: Kind = "money" if (figure.kind == "money" or header.money) else "count"
    return replace(figure, kind=kind, scale=header.factor, scale_text=header.text, header=True)


def read_figures(text: str, *, scale: Scale | None = None, headers: bool = True, years: bool = False) -> list[Figure]:
    """Every figure in `text`, in order, each read under its table's scale (see the module doc).

    `scale` is the passage's scale when the caller knows it (a table's caption); otherwise its
    headers are read from the text, unless `headers` is False (an answer: its figures carry their
    own words). `years` keeps standing-alone years as counts (a scorer comparing a reference "2019").
    """
    found = list(_raw_figures(text or "", years))
    if not headers and scale is None:
        return found
    marks = scales_in(text) if scale is None else []
    out = []
    offset = 0
    lines = []
    for line in (text or "").splitlines(keepends=True):
        lines.append((offset, offset + len(line), line))
        offset += len(line)
    for figure in found:
        begin, stop, line = next(((b, e, ln) for b, e, ln in lines if b <= figure.start < e), (0, len(text), text))
        label = text[begin:min((f.start for f in found if begin <= f.start < stop), default=stop)]
        if scale is not None:
            header: Scale | None = scale
        elif is_prose(line) and not any(begin <= h.start < stop for h in marks):
            header = None
        else:
            header = _header_for(marks, figure.start, (begin, stop), "|" in line)
        out.append(_in_context(figure, label, header))
    return out


def decimals_at(figure: Figure, scale: float) -> int:
    """The decimals `figure` shows once written in `scale`: 1,693,954 (thousands) in millions is 1,693.954: 3."""
    if figure.scale <= 0 or scale <= 0:
        return figure.decimals
    return max(0, figure.decimals + round(math.log10(scale / figure.scale)))


# -- what a question asks --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Asked:
    """The unit and rounding a question asks its figures in ("in USD millions", "round to one decimal")."""

    scale: float | None = None
    percent: bool = False
    points: bool = False  # "in percentage points"
    decimals: int | None = None
    currency: bool = False

    @property
    def scale_word(self) -> str:
        return SCALE_WORDS.get(self.scale or 1.0, "")


def asked_unit(question: str) -> Asked:
    """What the question asks for; every field empty when it names no unit or rounding."""
    q = question or ""
    scale = None
    if m := ASKED_SCALE.search(q):
        scale = SCALES[(m.group(1) or m.group(2)).lower()]
    decimals = None
    if m := ASKED_DECIMALS.search(q):
        word = m.group(1).lower()
        decimals = int(word) if word.isdigit() else _NUMBER_WORDS[word]
    elif m := ASKED_NEAREST.search(q):
        decimals = NEAREST[(m.group(1) or "whole").lower()]
    points = bool(ASKED_POINTS.search(q))
    return Asked(scale=scale, percent=points or bool(ASKED_PERCENT.search(q)), points=points, decimals=decimals,
                 currency=bool(ASKED_CURRENCY.search(q)))


# -- writing ---------------------------------------------------------------------------------------------------------
def round_half_up(x: float, decimals: int) -> Decimal:
    """`x` rounded as people round (2.675 -> 2.68), read from its shortest repr so 0.1+0.2 stays 0.3."""
    return Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_number(x: float, decimals: int | None = None) -> str:
    """ "1,693.954": thousands separators; `decimals` fixed, or None for exact (up to EXACT_DECIMALS, trimmed)."""
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {x}")
    places = EXACT_DECIMALS if decimals is None else decimals
    rounded = round_half_up(x, places)
    shown = f"{abs(rounded) if rounded == 0 else rounded:,.{places}f}"
    return shown.rstrip("0").rstrip(".") if decimals is None and "." in shown else shown


def format_figure(value: float, kind: Kind, *, scale: float = 1.0, decimals: int | None = None,
                  currency: bool | None = None, points: bool = False, scale_word: bool = True) -> str:
    """`value` (base units) written as a reader expects: "$1,693.95 million", "12.5%", "0.62", "$3.21".

    `scale` is the unit it is written in (1e6: millions); money and per-share figures carry "$"
    unless `currency` is False; percentages are "%", or "percentage points" when `points`.
    """
    if kind == "percent":
        return format_number(value, decimals) + (" percentage points" if points else "%")
    if kind == "ratio":
        return format_number(value, decimals)
    if kind == "per_share":
        return _signed_money(format_number(value, 2 if decimals is None else decimals), currency is not False)
    shown = format_number(value / scale, decimals)
    word = SCALE_WORDS.get(scale, "") if scale_word else ""
    text = _signed_money(shown, bool(currency) if currency is not None else kind == "money")
    return f"{text} {word}" if word else text


def _signed_money(shown: str, currency: bool) -> str:
    if not currency:
        return shown
    return "-$" + shown[1:] if shown.startswith("-") else "$" + shown


def present(value: float, kind: Kind, asked: Asked, *, decimals: int | None = None, points: bool = False) -> str:
    """`value` converted to what the question asks: its scale ("in USD billions"), a percentage, its rounding."""
    places = asked.decimals if asked.decimals is not None else decimals
    if kind == "ratio" and asked.percent and not asked.points:
        return format_figure(value * 100, "percent", decimals=places)
    if kind in ("money", "count"):
        return format_figure(value, kind, scale=asked.scale or 1.0, decimals=places,
                             currency=kind == "money" or asked.currency)
    return format_figure(value, kind, decimals=places, points=points or (kind == "percent" and asked.points))


# -- comparing -------------------------------------------------------------------------------------------------------
def _compatible(a: Figure, b: Figure) -> bool:
    """Kinds that may name the same quantity: a bare table number may be money, a count or a per-share amount."""
    if (a.kind == "percent") != (b.kind == "percent"):
        return False
    if a.kind == "percent":
        return a.points == b.points
    kinds = {a.kind, b.kind}
    return not ("ratio" in kinds and kinds & {"money", "per_share"})


def rounds_to(stated: Figure, held: float, min_digits: int = MIN_ROUNDED_DIGITS) -> bool:
    """`held` (base units) rounded to the precision `stated` shows, in its unit, is `stated` (magnitudes)."""
    if stated.significant_digits < min_digits and abs(stated.value) != abs(held):
        return False
    in_unit = abs(held) / stated.scale
    return round_half_up(in_unit, stated.precision) == round_half_up(abs(stated.number), stated.precision)


def states(stated: Figure, held: Figure, tolerance: float = 0.0, min_digits: int = MIN_ROUNDED_DIGITS) -> bool:
    """`stated` (an answer's figure) says `held` (a source's): the same value within `tolerance`,
    or `held` rounded to the precision `stated` shows. Not symmetric: an answer may round a
    source, never add digits to it."""
    if not _compatible(stated, held):
        return False
    if math.isclose(abs(stated.value), abs(held.value), rel_tol=tolerance, abs_tol=1e-9):
        return True
    return rounds_to(stated, held.value, min_digits)


def same_figure(a: Figure, b: Figure, tolerance: float = 0.0) -> bool:
    """The same quantity, unit-aware: equal values (within `tolerance`, relative), or one the other
    rounded as shown. 1,693,954 under "in thousands" == "$1,693.954 million" == "$1.69 billion".
    Signs are not compared: answers say "a loss of $5 million" for "(5)"."""
    return states(a, b, tolerance) or states(b, a, tolerance)


_DIGIT_SCALES = (1e3, 1e6, 1e-3)  # thousands <-> millions <-> billions


def same_digits(stated: str, held: str) -> bool:
    """Digit strings (`Figure.digits`): `held` as written, or restated a unit up or down and
    rounded to `stated`'s decimals ("213.1" is the "213105" of a table in thousands). Needs three
    significant digits, since "2.5" would match too many table numbers."""
    if stated == held:
        return True
    if len(stated.replace(".", "").lstrip("0")) < 3:
        return False
    decimals = len(stated.partition(".")[2])
    value, source = float(stated), float(held)
    return any(round(source / scale, decimals) == value for scale in _DIGIT_SCALES)
