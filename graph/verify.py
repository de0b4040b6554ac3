"""Every figure an answer states, checked before the user sees it; the answer repaired or refused.

A figure is supported when it states (graph/figures.py `states`: the same value, or the source
rounded to the precision the answer shows) a cited fact, the shown calculation's result or a
number of its working, a figure of a cited excerpt read under that excerpt's own scale, or a
figure the question itself gives. An excerpt's figure supports a sentence only when the sentence names
something its line says (`names_its_line`): "Amcor had 109 subscribers" does not rest on a "109" of a
line about something else. A bare amount in an answer ("1,694") is read in the unit the
question asks ("in USD millions"); asked none, it may copy the table's digits as written.

Repair, in the order a careful reader would accept it: an unsupported figure that is a supported
one's digits at another scale ("$1,693,954 million" for 1,693,954 in a table in thousands), in
the wrong kind of percent ("1.5%" for 1.5 percentage points) or rounded too coarsely ("$2
billion" for $1.5 billion) is replaced by that figure, correctly scaled; otherwise its sentence is
dropped. Candidates are taken from the facts first, then the calculation, then the excerpts the
sentence cites, then the other excerpts; two different candidates at the same rank are no repair.
A sentence that refers back to a dropped one ("This version is the latest ...") is dropped with it. An
answer whose figures all fail, or that has nothing left, becomes the refusal.

Small bare integers ("3 segments", "December 31") are not checked: they rarely identify a fact,
and a sentence would be dropped for writing "three" as "3". In the answer to a question asking for
one figure they are (a date's day aside): "The combined ratio was 1 [1]" is that figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

from graph.calc import Fact, Result
from graph.citations import MARK, marked
from graph.compose import wants_one_figure
from graph.facts import label_words
from graph.figures import (
    Asked,
    Figure,
    Scale,
    asked_unit,
    decimals_at,
    format_figure,
    is_prose,
    read_figures,
    rounds_to,
    same_figure,
    states,
)
from lexicon import (
    DIGITS,
    FUNCTION_WORDS,
    LETTERS,
    PER_SHARE_AFTER,
    REFERS_BACK,
    SCALE_WORDS,
    UNIT_WORDS,
    contrasted,
    letter_words,
    spelled_numbers,
    without_source,
)

Status = Literal["fact", "calculation", "excerpt", "question", "unsupported"]
_RESCALES = (1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9)
# A restated amount keeps its source's digits up to this many decimals: 1,693,954 thousand is
# "$1,693.954 million" and "$1.694 billion", not "$1.693954 billion".
MAX_RESTATED_DECIMALS = 3
# ...and is written in the answer's own scale word unless that needs more whole digits than this:
# "$540 thousand" for 540 million becomes "$540 million", not "$540,000 thousand".
MAX_RESTATED_WHOLE = 10_000
_END = re.compile(r"[.!?]+(?:\s*\[\d+(?:\s*,\s*\d+)*\])*(?=\s|$)|\n+")
# before a point that ends no sentence: a title, an initial, letters with points between ("U.S", "e.g", "a.k.a")
_ABBREVIATION = re.compile(r"(?:\b(?:Inc|Co|Corp|Ltd|No|vs|approx|Jr|Sr|St|Mr|Ms|Dr)|\b[A-Z]"
                           r"|\b(?:[A-Za-z]\.)+[A-Za-z])$")
# What a sentence says about its figure, not which thing it is: markers and years name no row.
_NOT_NAMING = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]|\b(?:fy)?(?:19|20)\d\d\b", re.I)
# Words a sentence states a figure with ("Amcor had 109 ...", "... per user"): they say nothing of what it is.
_STATING = frozenset(["had", "has", "have", "did", "does", "do", "made", "make", "makes", "be", "been", "being",
                      "with", "there", "also", "about", "approximately", "around", "over", "under", "per"])


_UNITS = label_words(" ".join(UNIT_WORDS))  # a unit says how a figure counts, not what it is of


@dataclass(frozen=True)
class Source:
    """A cited excerpt: its citation number, its text and, when known, its table's scale."""

    n: int
    text: str
    scale: Scale | None = None  # the table's caption scale; None: read the headers in the text


class FigureCheck(BaseModel):
    """One figure the answer states, and what it rests on."""

    text: str = Field(description="the figure as the answer wrote it")
    sentence: int = Field(description="the sentence it is in, from 0")
    kind: str
    value: float = Field(description="in base units: dollars, percentage points, the plain number")
    status: Status
    verified: bool = Field(description="supported as written")
    fact: int | None = Field(default=None, description="the fact it rests on")
    excerpt: int | None = Field(default=None, description="the excerpt [n] it rests on")
    held: str | None = Field(default=None, description="the supporting figure as its source writes it")
    action: Literal["kept", "replaced", "dropped"] = "kept"
    replaced_by: str | None = None


class VerifyReport(BaseModel):
    """What the check did to an answer, for the API's and the CLI's JSON."""

    answer: str = Field(description="the answer the user sees")
    original: str = Field(description="the answer as generated")
    verified: bool = Field(description="every figure was supported as written: nothing replaced or dropped")
    refused: bool
    figures: list[FigureCheck]
    dropped: list[str] = Field(description="sentences removed for an unsupported figure, or resting on one so removed")
    claims: list[dict[str, str]] = Field(default_factory=list,
                                         description="sentences the claim check removed, each with the check it "
                                                     "failed (graph/claims.py)")
    calculation: dict[str, object] | None = None


@dataclass(frozen=True)
class _Held:
    """A figure that can support the answer's, with where it comes from."""

    status: Status
    figure: Figure
    rank: int  # repair candidates are taken rank by rank
    fact: int | None = None
    excerpt: int | None = None
    shown: str = ""
    line: str = ""  # an excerpt's figure: its line with the line before and its heading (`_line_at`)


def names_its_line(sentence: str, line: str, ignore: Set[str] = frozenset(), asked: Set[str] = frozenset(), *,
                   one_figure: bool = True) -> bool:
    """The sentence names what its figure's line is about: words that name a row (graph/facts.py
    `label_words`: "revenue" for "Net sales"), beyond the company's names (`ignore`). Answering a
    question that asks for one figure (`one_figure`), of the words the sentence shares with the question
    (`asked`: what it answers) the line says at least half; otherwise, or sharing none (a question may
    ask in other words: "what did shareholders get" is answered by a dividend), it says one of the
    sentence's; naming nothing ("The figure is 412 million"), it speaks of what was asked.
    "Amcor had 109 subscribers [2]" copies the digits of a line about something else, and "average
    revenue per user was $10.21" those of a line of earnings per share."""
    line_words = words_of(line)
    if contrasted(line_words, asked):
        return False  # the line's figure is the other side of what is asked: "the nominal coverage of 0.95"
    own = words_of(_NOT_NAMING.sub(" ", sentence)) - ignore - _STATING - _UNITS
    if not own:
        own = set(asked)
        if not own:
            return True
    # a hyphened word says each of its parts: "fifteen-digit numbers" are of digits
    said = (line_words | words_of(line.replace("-", " ")) | _spelled_out(sentence, line)) - ignore - _UNITS
    answering = own & asked if one_figure else set()
    if answering:
        return 2 * len(answering & said) >= len(answering)
    return bool(own & said)


ACRONYM_LETTERS = (3, 6)  # a shorter one ("as", "an") is spelled by chance, a longer one is a word


def _spelled_out(sentence: str, line: str) -> set[str]:
    """The words of `sentence` that a word of `line` abbreviates by their initials: "left-hand side" for
    "lhs", "Programmable Voltage Source" for "PVS"."""
    least, most = ACRONYM_LETTERS
    short = {w.lower() for w in LETTERS.findall(line) if least <= len(w) <= most} - FUNCTION_WORDS
    parts = list(LETTERS.finditer(sentence))
    out: set[str] = set()
    for i in range(len(parts)):
        for k in range(least, min(most, len(parts) - i) + 1):
            run = parts[i:i + k]
            if "".join(m.group(0)[0] for m in run).lower() in short:
                out |= words_of(sentence[run[0].start():run[-1].end()])
    return out


# A one-letter name ("C amounts for about 70%", "Class B"), not the article "A" or "I", an initial or "C++".
_LETTER_NAME = re.compile(r"(?<![\w.+#'’-])([B-HJ-Z])(?![\w.+#'’-])")


def words_of(text: str) -> set[str]:
    """The words that can say what a figure is of: `label_words`, and one-letter names."""
    return label_words(text) | {m.lower() for m in _LETTER_NAME.findall(text)}


_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z\"“(])|…|\n\s*\n")
_SENTENCE_REACH = 600  # characters either side of a figure its sentence may run (a bound, not a paragraph)


def _sentence_at(text: str, at: int) -> str:
    """The sentence of running text holding position `at`, its wrapped lines joined; "" in a table (a
    row's cells are separated by " | ", or its words are few beside its numbers), where the line is
    the unit."""
    low = max(0, at - _SENTENCE_REACH)
    start = max((m.end() for m in _SENTENCE_END.finditer(text, low, at)), default=low)
    end_at = _SENTENCE_END.search(text, at, min(len(text), at + _SENTENCE_REACH))
    sentence = text[start:end_at.start() + 1 if end_at else min(len(text), at + _SENTENCE_REACH)]
    words = letter_words(sentence, 2)
    if " | " in sentence or len(words) < 3 * len(DIGITS.findall(sentence)):
        return ""
    return " ".join(sentence.split())


def _line_at(text: str, at: int) -> str:
    """The line of `text` holding position `at`, with the line before it (a wrapped sentence or label),
    the nearest line above without a number that is no sentence of prose (a table's heading:
    "Restructuring liability" over "Balance at December 31, 2022 | 81"; a paragraph above says nothing of
    the line's figure), and in running text the whole sentence (`_sentence_at`: "(b) ownership of more
    than fifty percent (50%) of the outstanding shares" wraps from what it defines)."""
    start = text.rfind("\n", 0, max(text.rfind("\n", 0, at), 0)) + 1
    end = text.find("\n", at)
    lines = text[:start].splitlines()
    heading = next((line for line in reversed(lines)
                    if line.strip() and not any(c.isdecimal() for c in line) and not is_prose(line)), "")
    return f"{heading}\n{text[start:end if end >= 0 else len(text)]}\n{_sentence_at(text, at)}"


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans covering `text`, one per sentence (its trailing markers and spaces included); a decimal
    point, "U.S." or an initial does not end a sentence, a line break does."""
    spans, start = [], 0
    for m in _END.finditer(text):
        if m.end() <= start or (m.group(0)[0] == "." and _ABBREVIATION.search(text[:m.start()])):
            continue
        end = m.end()
        while end < len(text) and text[end].isspace():
            end += 1
        spans.append((start, end))
        start = end
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _held(facts: Iterable[Fact], result: Result | None, excerpts: Sequence[Source], question: str,
          cited: set[int]) -> list[_Held]:
    out = [_Held("fact", f.figure, 0, f.n, f.source or None, _shown(f.figure, f.label)) for f in facts]
    if result is not None:
        alternates = [result.figure, result.exact_figure]
        if result.kind == "ratio":  # a ratio of 0.617 is stated as 61.7% too
            alternates.append(Figure(number=result.exact * 100, kind="percent", decimals=12))
        elif result.kind == "percent" and not result.points:
            alternates.append(Figure(number=result.exact / 100, kind="ratio", decimals=12))
        alternates += read_figures(result.working, headers=False)
        out += [_Held("calculation", f, 1, shown=result.working) for f in alternates]
    for source in excerpts:
        rank = 2 if source.n in cited else 3
        out += [_Held("excerpt", f, rank, excerpt=source.n, shown=_shown(f), line=_line_at(source.text, f.start))
                for f in [*read_figures(source.text, scale=source.scale), *_spelled_figures(source.text)]]
    out += [_Held("question", f, 4, shown=f.text) for f in read_figures(question, headers=False)]
    return out


SPELLED_LEAST = 2  # "one" and "zero" are pronouns and idioms as often as counts ("one of them")
_UNIT_REACH = 20  # characters after a number its unit's words are read in ("per cent", "million dollars")


def _spelled_figures(text: str) -> list[Figure]:
    """The figures `text` writes in words, each read with the words after it as its digits would be: "the
    thirty six pleasure-bound streams" holds the count 36, "six per cent." the percentage 6."""
    out = []
    for value, start, end in spelled_numbers(text):
        if value < SPELLED_LEAST:
            continue
        digits = str(value)
        read = read_figures(digits + text[end:end + _UNIT_REACH], headers=False)
        if read and read[0].start == 0 and read[0].kind != "count":
            shift = end - len(digits)
            out.append(replace(read[0], text=text[start:read[0].end + shift], start=start, end=read[0].end + shift))
        else:
            out.append(Figure(number=value, kind="count", text=text[start:end], start=start, end=end))
    return out


def _shown(figure: Figure, label: str = "") -> str:
    text = figure.text or format_figure(figure.value, figure.kind)
    if figure.header and figure.scale_text:
        text = f"{text} {figure.scale_text}"
    return f"{label}: {text}" if label else text


def _read_as(figure: Figure, asked: Asked) -> Figure:
    """A bare amount read in the question's unit."""
    return figure.at_scale(asked.scale) if figure.bare and asked.scale else figure


def _supports(stated: Figure, held: Figure, asked: Asked, tolerance: float) -> bool:
    read = _read_as(stated, asked)
    if states(read, held, tolerance):
        return True
    # asked no unit, a bare amount may copy the table's digits as written
    return stated.bare and not asked.scale and held.header and states(stated, held.as_written(), tolerance)


def _rescues(stated: Figure, held: Figure, asked: Asked) -> bool:
    """`stated` is `held` misread: at another scale, the wrong kind of percent, or rounded too far."""
    read = _read_as(stated, asked)
    if read.kind == "percent" and held.kind == "percent" and read.points != held.points:
        return abs(read.value) == abs(held.value) or rounds_to(read, held.value)
    if any(states(read.at_scale(read.scale * k), held) for k in _RESCALES):
        return True
    return states(read, held, min_digits=1)


def _restate(held: Figure, like: Figure, asked: Asked) -> str:
    """`held` written the way the answer wrote `like`: its unit word, currency, sign and suffix."""
    sign = -1.0 if like.number < 0 else 1.0
    value = sign * abs(held.value)
    if held.kind in ("percent", "ratio", "per_share"):
        decimals = asked.decimals if asked.decimals is not None else held.decimals
        text = format_figure(value, held.kind, decimals=decimals, points=held.points)
        if held.kind == "per_share" and (suffix := PER_SHARE_AFTER.search(like.text)):
            text += suffix.group(0)
        if held.kind == "ratio" and like.text.lower().endswith(("x", "times")):
            text += "x" if like.text.lower().endswith("x") else " times"
        return text
    scale = asked.scale or _restated_scale(held, like)
    currency = like.currency or held.currency or held.kind == "money"
    decimals = asked.decimals if asked.decimals is not None else min(decimals_at(held, scale), MAX_RESTATED_DECIMALS)
    return format_figure(value, "money" if currency else "count", scale=scale, decimals=decimals,
                         scale_word=not (like.bare and asked.scale))


def _restated_scale(held: Figure, like: Figure) -> float:
    """The answer's own scale word when the figure reads well in it ("$1,693.954 million"), else the source's."""
    own = like.scale if like.scale != 1.0 and not like.header else 1.0
    shown = abs(held.value) / own
    if 1 <= shown < MAX_RESTATED_WHOLE and decimals_at(held, own) <= MAX_RESTATED_DECIMALS:
        return own
    return held.scale if held.scale in SCALE_WORDS else 1.0


def _repair(stated: Figure, held: list[_Held], asked: Asked) -> _Held | None:
    for rank in sorted({h.rank for h in held}):
        found = [h for h in held if h.rank == rank and h.status != "question" and _rescues(stated, h.figure, asked)]
        if found:
            first = found[0]
            return first if all(same_figure(first.figure, h.figure) for h in found) else None
    return None


def verify(answer: str, *, refusal: str, facts: Sequence[Fact] = (), excerpts: Sequence[Source] = (),
           result: Result | None = None, question: str = "", tolerance: float = 0.0,
           ignore: Set[str] = frozenset(), question_words: Set[str] = frozenset()) -> VerifyReport:
    """Check every figure of `answer` against what it may rest on, repair it, and report (module doc).

    `refusal` is what the user sees when nothing supported is left (graph.prompts.CANNOT_ANSWER);
    `tolerance` is a relative slack beyond rounding (0: the rounding shown is the only slack);
    `ignore`: the words of the documents' company names, which say whose a figure is, not what;
    `question_words`: more words that say what the question asks (the filing words its glossary gives)."""
    asked = asked_unit(question)
    asked_words = (words_of(without_source(question)) | set(question_words)) - ignore - _STATING
    one_figure = wants_one_figure(question)
    checks: list[FigureCheck] = []
    kept: list[str] = []
    dropped: list[str] = []
    last_dropped = False
    for i, (start, end) in enumerate(sentences(answer)):
        sentence = answer[start:end]
        cited = set(marked(sentence))
        # an excerpt's figure supports a sentence that names what its line is about (`names_its_line`)
        held = [h for h in _held(facts, result, excerpts, question, cited)
                if h.status != "excerpt"
                or names_its_line(sentence, h.line, ignore, asked_words, one_figure=one_figure)]
        edits: list[tuple[Figure, str]] = []
        ours: list[FigureCheck] = []
        failed = False
        # a date's day ("December 31") is no figure read_figures reads
        for fig in (f for f in read_figures(sentence, headers=False) if f.identifying or one_figure):
            support = next((h for h in sorted(held, key=lambda h: h.rank)
                            if _supports(fig, h.figure, asked, tolerance)), None)
            check = FigureCheck(text=fig.text, sentence=i, kind=fig.kind, value=_read_as(fig, asked).value,
                                status=support.status if support else "unsupported", verified=support is not None)
            if support is None and (rescue := _repair(fig, held, asked)) is not None:
                support = rescue
                check.replaced_by = _restate(rescue.figure, fig, asked)
                check.action = "replaced"
                edits.append((fig, check.replaced_by))
            elif support is None:
                failed = True
            if support is not None:
                check.fact, check.excerpt, check.held = support.fact, support.excerpt, support.shown
            ours.append(check)
        # a sentence that refers back ("This version is the latest ...") rests on the one before: dropped with it
        last_dropped = failed or (last_dropped and REFERS_BACK.match(MARK.sub("", sentence)) is not None)
        if last_dropped:
            for check in ours:
                check.action = "dropped"
            dropped.append(sentence.strip())
        else:
            for fig, text in sorted(edits, key=lambda e: -e[0].start):
                sentence = sentence[:fig.start] + text + sentence[fig.end:]
            kept.append(sentence)
        checks += ours
    repaired = "".join(kept).strip()
    stated_figures = bool(checks)
    survived = any(c.action != "dropped" for c in checks)
    nothing_left = not letter_words(MARK.sub("", repaired))
    refused = nothing_left or (stated_figures and not survived) or repaired == refusal.strip()
    verified = all(c.verified for c in checks) and not refused and not dropped
    return VerifyReport(answer=refusal if refused else repaired, original=answer, refused=refused, verified=verified,
                        figures=checks, dropped=dropped, calculation=result.as_dict() if result is not None else None)
