"""What the model sees of a passage: the windows where the evidence is, within a character budget.

A parent passage (~1,500 tokens) is too long to show whole, and one window centred on the matched
child misses the answer when it sits a few lines away: a form's field under its label, a table's
row below its heading, the sentence after the one the search matched. So a passage is cut into
lines and sentences, each scored by the question's words it holds (each word weighted by how rare it
is in the passage), and the view is built greedily: the best-scoring unit with the unit after it
(a label's value, a heading's row), every matched child, then the next best units, until the budget
is spent; what is left of it goes to the lines around them. The pieces are shown in the
passage's order, joined by " … ". A passage within the budget is shown whole.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lexicon import FUNCTION_WORDS

# Two words sharing this many first letters count as one ("recruited" / "recruitment").
STEM = 5
GAP = " … "
_UNIT = re.compile(r"[^\n]+?(?:[.!?](?=\s)|$)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|\d+(?:[.,]\d+)*")


def stems(text: str) -> set[str]:
    """The content words of `text`, lower-cased and cut to their stem; numbers kept whole."""
    out = set()
    for word in _WORD.findall(text.lower()):
        word = word.strip("'-")
        if word and word not in FUNCTION_WORDS and (len(word) > 2 or word[0].isdigit()):
            out.add(word if word[0].isdigit() else word[:STEM])
    return out


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    score: float


def _units(text: str, asked: set[str]) -> list[_Unit]:
    found = [(m.start() + len(m.group(0)) - len(m.group(0).lstrip()), m.end(), stems(m.group(0)))
             for m in _UNIT.finditer(text) if m.group(0).strip()]
    df: dict[str, int] = {}
    for _, _, words in found:
        for w in words & asked:
            df[w] = df.get(w, 0) + 1
    n = len(found) or 1
    return [_Unit(s, e, sum(math.log(1 + n / df[w]) for w in words & asked)) for s, e, words in found]


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """A span widened to whole words."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def view(parent: str, matched: Sequence[str], question: str, limit: int) -> str:
    """At most about `limit` characters of `parent`: where the question's words and the matched
    children are (module doc)."""
    if len(parent) <= limit:
        return parent
    units = _units(parent, stems(question))
    starts, ends = [u.start for u in units], [u.end for u in units]
    spans: list[tuple[int, int]] = []  # in the order taken: the budget left grows around them in that order
    shown: list[tuple[int, int]] = []  # the same, merged and sorted: what a new span would add
    used = 0

    def adds(start: int, end: int) -> int:
        return max(0, end - start) - sum(max(0, min(e, end) - max(s, start)) for s, e in shown)

    def take(start: int, end: int) -> None:
        """Adds the span when what it adds fits the budget; only a first piece is ever cut to fit."""
        nonlocal used, shown
        start, end = _snap(parent, max(0, start), min(len(parent), end))
        new = adds(start, end)
        if new == 0 or used + new > limit and spans:
            return
        if used + new > limit:
            end = start + limit
            new = limit
        spans.append((start, end))
        shown = _merged([*shown, (start, end)])
        used += new

    ranked = sorted(range(len(units)), key=lambda i: (-units[i].score, i))
    if ranked and units[ranked[0]].score > 0:
        best = ranked[0]
        take(units[best].start, units[min(best + 1, len(units) - 1)].end)
    for child in matched:
        at = parent.find(child[:80].strip())
        if at >= 0:
            take(at, at + len(child))
    for i in ranked:
        if units[i].score <= 0:
            break
        take(units[i].start, units[i].end)
    if not spans:  # nothing matched: the passage's beginning
        take(0, limit)
    # the budget left: the neighbouring lines of what was taken, nearest first, on both sides
    grown = True
    while used < limit and grown:
        grown = False
        for s, e in list(spans):
            after, before = bisect.bisect_left(starts, e), bisect.bisect_right(ends, s) - 1
            for near in (units[after] if after < len(units) else None, units[before] if before >= 0 else None):
                if near is not None and used < limit:
                    size = used
                    take(near.start, near.end)
                    grown = grown or used > size
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and not parent[merged[-1][1]:s].strip():
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    pieces = [parent[s:e].strip() for s, e in merged]
    head = "… " if merged[0][0] > 0 else ""
    tail = " …" if merged[-1][1] < len(parent) else ""
    return head + GAP.join(p for p in pieces if p) + tail
