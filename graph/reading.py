"""The question read once: what it asks for, in which words, unit, period and names (issue 39, item 2).

`read` is called when the question is settled (graph/nodes/begin.py, then condense.py for a
follow-up) and the result is kept in the state as `reading`; every node takes what it needs from it
(graph/nodes/common.py `reading_of`) instead of reading the question again in its own way.

What is asked (`asks`) comes from the question's form, whatever the document's genre:
- "explanation": "why", "what happens";
- "yes_no": it opens with an auxiliary ("Does the committee ...", "Was the pilot ...");
- "date": "when", or "what/which ... year, date, day, month";
- "name": "who", "whom", "whose", "which" (after a preposition too: "In which release ..."), or "the name of";
- "value": "how many, much, long, far ...", "the most/number of ...", or a figure (graph/facts.py
  `asks_for_figure`);
- "list": "list", "name the/all", "what are the steps/types ...";
- "explanation": "how" (not of a quantity: "How did revenue change" asks a figure), "explain",
  "describe", "the purpose/reason of";
- "other": anything else ("What does the protocol require of participants?").
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any, Literal, cast

from graph.calc import choose_op
from graph.facts import asks_for_figure
from graph.figures import Asked, asked_unit
from graph.windows import stems
from lexicon import ASKED_DIMENSION, CODE_WORD, DIMENSIONS, NUMBERED_NAME, POSSESSIVE, QUESTION_FORMS, QUESTION_FRAMING
from lexicon import CALENDAR_WORD as _CALENDAR
from lexicon import CAPITALS as _ACRONYM  # digits alone ("2023") name no measure either
from storage.question_period import AskedPeriod, asked_period

Kind = Literal["yes_no", "date", "name", "value", "list", "explanation", "other"]

# What a question's form asks for, tried in order (module doc).
_KINDS = cast(tuple[tuple[Kind, re.Pattern[str]], ...], QUESTION_FORMS)
# Words that say a quantity or a period is asked, not what it is of ("how long", "the most", "at the end of").
_ASKING = frozenset([*DIMENSIONS, "most", "least", "maximum", "minimum", "exact", "exactly", "roughly", "end",
                     "ended", "ending", "beginning", "start", "period", "fiscal", "year", "years", "quarter"])

# -- the names a question uses ----------------------------------------------------------------------------------------
# a whole word: not the "Cs" of "PCs" nor "Connect" of "i-Connect"; a point inside it ("Connect.Net"), not the
# full stop after it ("... Table Games Win. Round your answer" names no "Win. Round")
_TITLE = r"(?<![\w.-])[A-Z][a-z](?:[\w&'-]|\.(?=\w))*"
# a possessive ends a name: "Kowalik and Isard's French patent" names "Kowalik and Isard", not "... French"
_NAME = re.compile(rf"{_TITLE}(?:(?<!['’]s)\s+(?:&\s+|of\s+|and\s+)?{_TITLE})*")
# Capitalised words that are the question's own phrasing, not a name.
_PHRASING = frozenset(
    ["what", "who", "whom", "whose", "how", "which", "when", "where", "why", "is", "was", "were", "are", "did",
     "does", "do", "can", "could", "would", "should", "will", "tell", "give", "please", "answer", "using", "use",
     "based", "by", "in", "for", "according", "considering", "consider", "assume", "assuming", "taking", "take",
     "the", "a", "an", "if", "has", "have", "had", "we", "you", "i", "it", "of", "and", "or", "on", "at", "from",
     "to", "as", "with", "this", "that", "these", "those", "there", "here", "calculate", "compute", "find", "list",
     "name", "show", "describe", "explain", "compare", "summarize", "summarise", "provide", "state", "what's",
     "how's", "roughly", "approximately", "about", "between", "during", "since", "after", "before", "among",
     "given"])
_RELEASE_NAME = re.compile(r"(?<![\w.])\d[\d.]*[A-Za-z]+\d[\w.]*")  # "0.93R6", "2.2r3": a name, whatever the word
_RELEASE = re.compile(r"^([\d.]+)(.*)$")


def _a_year(number: str) -> bool:
    return len(number) == 4 and number.isdecimal() and number[:2] in ("19", "20")


def numbered(text: str) -> list[tuple[str, str, int]]:
    """The things `text` names by a word and a number, as (the word in lower case, the number, where it
    stands): "Debian 1.1 Buzz" -> ("debian", "1.1", 0). Months and years are dates, not numbers of a name."""
    return [(m.group(1).lower(), m.group(2).lower(), m.start()) for m in NUMBERED_NAME.finditer(text or "")
            if _names_a_thing(m)]


def _names_a_thing(m: re.Match[str]) -> bool:
    """A word and a number that name a thing: not a year, nor a date's month or day, nor the question's phrasing."""
    return not _a_year(m.group(2)) and not _CALENDAR.match(m.group(1)) and m.group(1).lower() not in _PHRASING


def unnumbered(text: str) -> str:
    """`text` with the numbers of the things it names taken out ("Debian 0.93R6" -> "Debian"): they say
    which thing, not how many or how much."""
    named = NUMBERED_NAME.sub(lambda m: m.group(1) if _names_a_thing(m) else m.group(0), text or "")
    return _RELEASE_NAME.sub(" ", named)


def same_number(a: str, b: str) -> bool:
    """Whether two numbers of a name are one: "8" and "8.0" are, "1.0" and "1.1" are not, and a point
    release ("2.2r3") is of its release ("2.2")."""
    ma, mb = _RELEASE.match(a), _RELEASE.match(b)
    if not ma or not mb:
        return a == b
    parts_a = [int(p) for p in ma.group(1).split(".") if p]
    parts_b = [int(p) for p in mb.group(1).split(".") if p]
    width = max(len(parts_a), len(parts_b))
    parts_a += [0] * (width - len(parts_a))
    parts_b += [0] * (width - len(parts_b))
    return parts_a == parts_b and (ma.group(2) == mb.group(2) or not ma.group(2) or not mb.group(2))


def names_in(question: str, *, lone: bool = False) -> list[str]:
    """The names a question uses: runs of two or more capitalised words, one word in the possessive
    ("Nike's"), without its phrasing words, possessives cut, and words written as code ("R_PAPERSIZE").
    A lone capitalised word is too often an ordinary word set in title case ("the Real change",
    "Highest") to refuse on; `lone` adds those (graph/unanswerable.py: a question is not refused when
    one of its lone names is mentioned, "Block's (formerly Square)")."""
    out: list[str] = []
    for m in _NAME.finditer(question or ""):
        possessive = m.group(0).endswith(("'s", "’s", "s'")) or question[m.end():m.end() + 2] in ("'s", "’s")
        words = POSSESSIVE.sub("", m.group(0)).split()
        while words and (words[0].lower() in _PHRASING or _CALENDAR.match(words[0])):
            words.pop(0)
        while words and (words[-1].lower() in _PHRASING or _CALENDAR.match(words[-1])):
            words.pop()
        name = " ".join(words).strip(" .,'")
        # a sentence's first word is capitalised by orthography, not because it is a name
        first = not question[:m.start()].strip() or question[:m.start()].rstrip()[-1] in ".?!:;\n"
        single_at_start = len(words) == 1 and first and m.group(0).split()[0] == words[0]
        if name and name not in out and (len(words) > 1 or possessive or (lone and not single_at_start)):
            out.append(name)
    out += [w for w in dict.fromkeys(CODE_WORD.findall(question or "")) if w not in out and not _CALENDAR.match(w)]
    return out


def kind_of(question: str) -> Kind:
    """What the question asks for, read from its form (module doc)."""
    asked = QUESTION_FRAMING.sub("", (question or "").strip())
    for i, (kind, pattern) in enumerate(_KINDS):
        if kind == "explanation" and i and asks_for_figure(asked):
            return "value"  # "How did revenue change, in USD millions?" asks a figure
        if pattern.search(asked):
            return kind
    return "value" if asks_for_figure(asked) else "other"


@dataclass(frozen=True)
class Reading:
    question: str
    asks: Kind = "other"
    figure: bool = False  # it wants a number (graph/facts.py `asks_for_figure`)
    operation: str | None = None  # the calculation its wording names (graph/calc.py `choose_op`)
    unit: Asked = field(default_factory=Asked)  # the unit, scale and rounding it asks figures in
    period: AskedPeriod = field(default_factory=AskedPeriod)
    names: tuple[str, ...] = ()  # names it uses surely (names_in)
    lone_names: tuple[str, ...] = ()  # ... and with lone capitalised words (names_in(lone=True))
    measure: frozenset[str] = frozenset()  # stems of its own words: not names, numbers, periods or phrasing
    quantity: str = ""  # the dimension a "how long/far/old/..." asks ("long"); "" for any other question
    numbered: tuple[tuple[str, str], ...] = ()  # the things it names by a word and a number (`numbered`)

    def to_state(self) -> dict[str, Any]:
        """JSON-safe (graph/state.py): lists for tuples and sets, an ISO date."""
        out = asdict(self)
        out["measure"] = sorted(self.measure)
        out["numbered"] = [list(pair) for pair in self.numbered]
        out["period"]["day"] = self.period.day.isoformat() if self.period.day else None
        return out

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Reading:
        period = dict(data.get("period") or {})
        day = period.get("day")
        return cls(question=data["question"], asks=data.get("asks", "other"), figure=bool(data.get("figure")),
                   quantity=data.get("quantity") or "",
                   operation=data.get("operation"), unit=Asked(**(data.get("unit") or {})),
                   period=AskedPeriod(years=tuple(period.get("years") or ()), quarter=period.get("quarter"),
                                      day=date.fromisoformat(day) if day else None, form=period.get("form") or ""),
                   names=tuple(data.get("names") or ()), lone_names=tuple(data.get("lone_names") or ()),
                   measure=frozenset(data.get("measure") or ()),
                   numbered=tuple((word, number) for word, number in data.get("numbered") or ()))


def measure_words(question: str) -> frozenset[str]:
    """The stems of what the question speaks of: its words but names, acronyms, numbers, months,
    phrasing and function words ("How long is a developers' vote open?" -> develop, vote, open)."""
    named = " ".join([*names_in(question[1:] if question else "", lone=True), *_ACRONYM.findall(question or "")])
    drop = stems(named) | stems(" ".join(_PHRASING | _ASKING))
    return frozenset(s for s in stems(question or "") - drop if not s[0].isdigit() and not _CALENDAR.match(s))


def read(question: str) -> Reading:
    q = (question or "").strip()
    return Reading(question=q, asks=kind_of(q), figure=asks_for_figure(q), operation=choose_op(q),
                   unit=asked_unit(q), period=asked_period(q), names=tuple(names_in(q)),
                   lone_names=tuple(names_in(q, lone=True)), measure=measure_words(q),
                   quantity=m.group(1).lower() if (m := ASKED_DIMENSION.search(q)) else "",
                   numbered=tuple(dict.fromkeys((word, number) for word, number, _ in numbered(q))))
