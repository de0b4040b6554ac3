"""What the excerpts an answer cites bear out, sentence by sentence, beyond its figures (graph/verify.py
checks those): a sentence stating no figure must share a word of its own with what it cites, a sentence
stating figures must name what they are of; and the evidence lines each kept citation rests on.
"""

from __future__ import annotations

import re
from typing import Any

from graph import claims
from graph.citations import MARK, marked
from graph.facts import label_words
from graph.figures import read_figures
from graph.reading import Reading
from graph.state import Citation, Evidence, Excerpt
from graph.verify import VerifyReport, sentences
from graph.windows import GAP, stems
from lexicon import MONTHS, POLARITY_WORDS, SCALES, YEAR, letter_words, squashed, statements

# Two content words sharing this many first letters count as one ("leases" / "leased").
STEM = 5
# The most words a sentence of prose holds (`figure_in_prose`); longer is table text run together.
PROSE_WORDS = 60


def _stems(text: str) -> set[str]:
    """The stems of `text`'s words, a month however written as one ("April", "Apr", the 12 of "2012-12-22"), and
    its years ("around 1995" says when)."""
    months = {f"month{month}" for _, month, _ in claims.dates_in(text)}
    return months | set(YEAR.findall(text)) | {f"month{MONTHS[w]}" if w in MONTHS else w[:STEM]
                                              for w in label_words(text) if len(w) > 2}


def _cited(sentence: str) -> set[int]:
    return set(marked(sentence))


_WHETHER = {w[:STEM] for w in POLARITY_WORDS}  # "Yes," says whether, not what: no word of its own


def unsupported_claims(answer: str, texts: dict[int, str], question: str) -> list[tuple[str, str | None]]:
    """Sentences stating no figure that cite excerpts none of whose own words (beyond the question's)
    the excerpts hold, each with its repair: citing instead the excerpt that holds most of them, when
    one does (the model cited the wrong one); a sentence stating figures is checked figure by figure
    (graph/verify.py)."""
    asked = _stems(question)
    out: list[tuple[str, str | None]] = []
    for start, end in sentences(answer):
        sentence = answer[start:end]
        cited = _cited(sentence)
        own = _stems(MARK.sub("", sentence)) - asked - _WHETHER
        if not cited or not own or any(f.identifying for f in read_figures(sentence, headers=False)):
            continue
        held = set().union(*(_stems(texts.get(n, "")) for n in cited))
        if not own & held:
            shares = sorted(((len(own & _stems(t)), -n) for n, t in texts.items() if n not in cited), reverse=True)
            better = -shares[0][1] if shares and shares[0][0] else None
            uncited = re.sub(rf"\s*(?:{MARK.pattern})", "", sentence)
            out.append((sentence, claims.with_markers(uncited, (better,)) if better else None))
    return out


_SCALE_WORDS = frozenset([*SCALES, "usd", "dollars", "percent", "per", "share"])


def bare_figures(answer: str) -> list[str]:
    """Sentences that state figures and name nothing ("5,472 million [3]."): a reader cannot tell what
    the figure is of, so it answers nothing."""
    out = []
    for start, end in sentences(answer):
        sentence = answer[start:end]
        words = [w for w in letter_words(MARK.sub("", sentence), 3) if w.lower() not in _SCALE_WORDS]
        if not words and read_figures(sentence, headers=False):
            out.append(sentence)
    return out


def _closest_line(text: str, sentence: str) -> str:
    """The statement of `text` (a sentence, read whole across the lines it wraps over, or a line that is
    no sentence: a row, a list's item) sharing most words with `sentence`."""
    words = _stems(MARK.sub("", sentence))
    best, best_score = "", 0
    for part in statements(text):
        score = len(_stems(part) & words)
        if score > best_score:
            best, best_score = part.strip(), score
    return best


def evidence_of(answer: str, report: VerifyReport, citations: list[Citation],
                facts: list[dict[str, Any]], numbers: dict[str, int]) -> dict[int, list[Evidence]]:
    """For each cited source, the rows and sentences the answer rests on (module doc)."""
    by_fact = {int(f["n"]): f for f in facts}
    texts = {c["n"]: c.get("text") or "" for c in citations}
    out: dict[int, list[Evidence]] = {}

    def add(n: int, item: Evidence) -> None:
        if n in texts and all(e["text"] != item["text"] for e in out.get(n, [])):
            out.setdefault(n, []).append(item)

    for check in report.figures:
        if check.action == "dropped":
            continue
        if check.fact is not None and (fact := by_fact.get(check.fact)):
            cell = fact["cell"]
            add(numbers.get(str(fact["key"]), 0), Evidence(text=str(fact["evidence"]), box=cell.get("row_box"),
                                                           context=str(fact.get("context") or ""),
                                                           kind="row"))
        elif check.excerpt is not None and check.held:
            line = next((x.strip() for x in texts.get(check.excerpt, "").split("\n") if x and check.held in x), "")
            if line:
                add(check.excerpt, Evidence(text=line, box=None, kind="row" if "\t" in line or "|" in line
                                            else "sentence"))
    for start, end in sentences(answer):
        sentence = answer[start:end]
        for n in _cited(sentence):
            if n not in out and (line := _closest_line(texts.get(n, ""), sentence)):
                add(n, Evidence(text=line, box=None, kind="sentence"))
    return out


def figure_in_prose(excerpts: list[Excerpt], reading: Reading) -> bool:
    """Whether a sentence of an excerpt's prose states a number beside most of the question's measure words
    (and beside a year it asks, when it asks one), in an excerpt that mentions the names the question uses:
    "may object ... within 21 days" for "How many days do maintainers have to object?". When no table row
    listed for a figure question is the figure asked, the answer may still be in the prose.

    The prose is an excerpt's lines outside table rows, wrapped lines joined, each piece between the
    window's gaps read apart; a "sentence" of more than PROSE_WORDS words is text run together, not one."""
    need = reading.measure
    if not need:
        return False
    given = {w for w in stems(reading.question) if w[0].isdigit()}
    years = {str(y) for y in reading.period.years}
    for excerpt in excerpts:
        held = squashed(f"{excerpt.get('name') or ''} {excerpt.get('text') or ''}")
        if reading.lone_names and not any(squashed(n) in held for n in reading.lone_names):
            continue  # another company's or document's sentence answers for none of the names asked
        prose = " ".join(line for line in str(excerpt.get("text") or "").splitlines() if "|" not in line)
        for piece in prose.split(GAP):
            for a, b in sentences(piece):
                words = stems(piece[a:b])
                if len(piece[a:b].split()) > PROSE_WORDS or not {w for w in words if w[0].isdigit()} - given - years:
                    continue
                if (not years or years & words) and len(words & need) > len(need) // 2:
                    return True
    return False
