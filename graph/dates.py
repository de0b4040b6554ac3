"""A date as precise as the excerpts write it (issue 39): the answer to "when" gives the day they give.

The model often answers a "when" with the less precise of two ways the excerpts write one date:
"Debian 2.0 Hamm was released July 1998" beside "Debian 2.0 Hamm (July 24th, 1998)", or "died on May 18th"
under the heading "May 2013: Ray Dassen died". When a statement of the excerpts about the same thing
(sharing two of the sentence's own words) writes the date whole, or gives the year a day and month
lack, and only one such date fits, the sentence says it whole and cites the excerpt that holds it.
Nothing is written that an excerpt does not hold: the day and month or the month and year are the
sentence's, the rest the statement's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from graph.citations import MARK, marked
from graph.windows import stems
from lexicon import DATE_WORDS as _DATE_WORDS
from lexicon import MONTH_DAY_ALONE as _MONTH_DAY
from lexicon import MONTH_YEAR as _MONTH_YEAR
from lexicon import MONTHS, WHOLE_DATES, statements


def _month(text: str) -> int:
    return MONTHS[text.lower().rstrip(".")]


def _whole(text: str) -> list[tuple[int, int, int, str]]:
    """The dates `text` writes whole, as (year, month, day, as written)."""
    return [(int(m["year"]), _month(m["month"]), int(m["day"]), m.group(0))
            for pattern in WHOLE_DATES for m in pattern.finditer(text)]


def _about(statement: str, sentence: str) -> bool:
    return len(stems(_DATE_WORDS.sub(" ", statement)) & stems(_DATE_WORDS.sub(" ", MARK.sub(" ", sentence)))) >= 2


def _completions(sentence: str, texts: Mapping[int, str]) -> list[tuple[str, str, int]]:
    """(what the sentence writes, the date whole, the excerpt holding the rest) for each of its dates that a
    statement about the same thing makes whole in one way only."""
    out = []
    body = MARK.sub(" ", sentence)
    spans = [range(m.start(), m.end()) for pattern in WHOLE_DATES for m in pattern.finditer(body)]
    partial: list[tuple[str, int | None, int, int | None]] = [
        (m.group(0), int(m["year"]), _month(m["month"]), None) for m in _MONTH_YEAR.finditer(body)
        if not any(m.start() in span for span in spans)]  # "July 1998" of "24 July 1998" is whole
    partial += [(m.group(0), None, _month(m["month"]), int(m["day"])) for m in _MONTH_DAY.finditer(body)
                if not any(m.start() in span for span in spans)]  # "September 19" of "2022 September 19"
    for written, year, month, day in partial:
        found: dict[str, int] = {}
        for n, text in texts.items():
            for statement in statements(text):
                if not _about(statement, sentence):
                    continue
                for y, m, d, whole in _whole(statement):
                    if m == month and (y == year or d == day):
                        found.setdefault(whole if day is None else f"{written}, {y}", n)
                if day is not None:
                    for g in _MONTH_YEAR.finditer(statement):
                        if _month(g["month"]) == month:
                            found.setdefault(f"{written}, {g['year']}", n)
        if len({_key(f) for f in found}) == 1:
            whole, n = next(iter(found.items()))
            out.append((written, whole, n))
    return out


def _key(written: str) -> tuple[int, int, int] | None:
    dates = _whole(written)
    return dates[0][:3] if dates else None


def completed(answer: str, spans: list[tuple[int, int]], texts: Mapping[int, str]) -> str:
    """`answer` (its sentence `spans`) with each date the excerpts (`texts` by [n]) write more precisely
    written whole, citing the excerpt that holds it (module doc)."""
    out, last = [], 0
    for start, end in spans:
        sentence = answer[start:end]
        for written, whole, n in _completions(sentence, texts):
            on_day = re.search(rf"\bin\s+{re.escape(written)}", sentence)  # "in April 2015" -> "on April 25th, 2015"
            sentence = sentence.replace(f"in {written}" if on_day else written, f"on {whole}" if on_day else whole, 1)
            if n not in marked(sentence):
                marks = list(MARK.finditer(sentence))
                at = marks[-1].end() if marks else len(sentence.rstrip().rstrip(".!?"))
                sentence = f"{sentence[:at]}[{n}]{sentence[at:]}"
        out.append(answer[last:start] + sentence)
        last = end
    return "".join(out) + answer[last:]
