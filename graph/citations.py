"""Citations: the one builder of the numbered source list, and the checks on a written answer
(markers must be listed, figures must come from the excerpt they cite).

A small model often states a figure correctly but cites the neighbouring excerpt, or cites
nothing. Every figure it copies can be looked up in the excerpts, so a sentence whose figures
appear in some excerpts but in none of those it cites is re-pointed to the excerpts that hold
them, and a sentence without a marker gets one. Figures found nowhere (computed ratios,
invented numbers) leave the sentence as the model wrote it; an answer whose figures ALL come from
nowhere is not grounded (`ungrounded`), and the answer node then says it cannot answer.
A figure also counts as found when it is a table's number restated in another unit: "$213.1
million" is the "213,105" of a table in thousands (at least three significant digits, rounded
to the stated precision).
"""

from __future__ import annotations

import re

from graph.figures import read_figures, same_digits
from graph.state import Citation, Excerpt, PagePart
from graph.windows import GAP, stems
from lexicon import MARK as MARK  # re-exported: the graph reads markers from here

_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=\d))*(?:[.!?]+(?!\d)|\n|$)")


def marked(sentence: str) -> list[int]:
    """The excerpt numbers `sentence`'s markers cite, in order ("[1][2, 3]" -> 1, 2, 3)."""
    return [int(x) for m in MARK.finditer(sentence) for x in m.group(1).split(",")]


def before_stop(sentence: str, marks: str) -> str:
    """`sentence` with `marks` ("[1][2]") written before its closing stop, its trailing space kept."""
    body = sentence.rstrip()
    end = len(body) - (1 if body[-1:] in ".!?" else 0)
    return body[:end].rstrip() + " " + marks + body[end:] + sentence[len(body):]


def citations_of(excerpts: list[Excerpt]) -> list[Citation]:
    """The excerpts as the model saw them, numbered from 1: `[n]` in an answer is entry n."""
    return [Citation(n=n, document_id=e.get("document_id"), name=str(e.get("name") or ""), page=e.get("page"),
                     page_label=e.get("page_label"), ocr=bool(e.get("ocr")), boxes=e.get("boxes"),
                     url=e.get("url"), text=str(e.get("text") or "")) for n, e in enumerate(excerpts, 1)]


# A marker repeated after the sentence it ends ("… dollars [1]. [1]") or right after itself.
_REPEAT = re.compile(r"(\[[\d, ]+\])\s*([.!?]?)\s*\1")


def on_evidence_page(citation: Citation, parts: list[PagePart]) -> Citation:
    """The citation named by the page its first evidence line is on, where the passage it cites spans
    pages (its `parts`): the fact's page, not the page the search matched."""
    # the longest piece of each line: a line of the shown text may join two windows (graph/windows.py)
    lines = [" ".join(max(str(e.get("text") or "").split(GAP), key=len).split())
             for e in citation.get("evidence") or []]
    for line in (x for x in lines if x):
        part = next((p for p in parts if line in " ".join(p["text"].split())), None)
        if part is not None:
            if part["page"] == citation.get("page"):
                return citation
            return Citation(**{**citation, "page": part["page"], "page_label": part["page_label"],
                               "boxes": part["boxes"]})
    return citation


# A lone bracketed number at least this large, beyond the excerpts listed, is a value the model wrote in
# brackets ("The area code for Thunder Bay is [807]."), not a citation of an excerpt never listed ("[4]").
BRACKETED_VALUE = 10


def clean_markers(answer: str, count: int) -> tuple[str, list[int]]:
    """Drop citation numbers outside 1..count; return the answer and the numbers it cites. A lone number
    beyond the list and at least BRACKETED_VALUE is kept as the value it is, its brackets dropped: the claim
    check then finds it in an excerpt or strikes its sentence."""
    cited: list[int] = []

    def keep(m: re.Match[str]) -> str:
        ns = [int(x) for x in m.group(1).split(",")]
        if len(ns) == 1 and ns[0] > count and ns[0] >= BRACKETED_VALUE:
            return m.group(1).strip()
        ok = [n for n in ns if 1 <= n <= count]
        cited.extend(n for n in ok if n not in cited)
        return "[" + ", ".join(map(str, ok)) + "]" if ok else ""

    cleaned = MARK.sub(keep, answer)
    while (deduped := _REPEAT.sub(r"\1\2", cleaned)) != cleaned:
        cleaned = deduped
    return cleaned.strip(), cited


def figures(text: str) -> set[str]:
    """Numbers that identify a fact, as digit strings: three digits or more, a decimal part, or a
    currency or unit beside them ($81 million, 12%); years excluded (graph/figures.py reads them)."""
    return {f.digits for f in read_figures(text, headers=False) if f.identifying}


def same_figure(stated: str, held: str) -> bool:
    """`stated` (from the answer) is `held` (from an excerpt), or `held` in another unit."""
    return same_digits(stated, held)


def _overlap(stated: set[str], held: set[str]) -> bool:
    return any(same_figure(s, h) for s in stated for h in held)


def repair_citations(answer: str, texts: list[str], question: str = "") -> str:
    """Point each sentence's markers at the excerpts that hold its figures (see module doc)."""
    held = [figures(t) for t in texts]
    asked = figures(question)
    out = []
    for sentence in _SENTENCE.findall(answer):
        if not sentence:
            continue
        wanted = figures(sentence) - asked
        holders = [n for n, f in enumerate(held, 1) if _overlap(wanted, f)]
        cited = set(marked(sentence))
        if wanted and holders and not cited & set(holders):
            marker = "[" + ", ".join(map(str, holders[:2])) + "]"
            if cited:
                sentence = MARK.sub("", sentence, count=0)
                sentence = re.sub(r"\s+([.!?])", r"\1", sentence)
            sentence = before_stop(sentence, marker)
        out.append(sentence)
    return "".join(out)


# An uncited sentence is given the excerpt holding this many of its own words (beyond the question's), at least,
# or this share of them: "your rights under the MPL will terminate." has one word the question does not.
CITE_BY_WORDS = 2
CITE_BY_SHARE = 0.75


def cite_uncited(answer: str, texts: list[str], question: str = "") -> str:
    """An answer that cites nothing ("This is stated in the excerpt."): each sentence cites the excerpt
    that holds most of its own words, when one holds at least CITE_BY_WORDS of them or CITE_BY_SHARE
    of them. The claim check then holds the sentence to what that excerpt says."""
    if MARK.search(answer) or not texts:
        return answer
    asked = stems(question)
    held = [stems(t) for t in texts]
    out = []
    for sentence in _SENTENCE.findall(answer):
        own = stems(sentence) - asked
        scores = [len(own & h) for h in held]
        best = max(range(len(held)), key=lambda n: scores[n])
        if sentence.strip() and own and (scores[best] >= CITE_BY_WORDS or scores[best] / len(own) >= CITE_BY_SHARE):
            sentence = before_stop(sentence, f"[{best + 1}]")
        out.append(sentence)
    return "".join(out)


def ungrounded(answer: str, texts: list[str], question: str = "") -> bool:
    """True when the answer states figures (beyond the question's) and none is in any excerpt."""
    stated = figures(answer) - figures(question)
    return bool(stated) and not any(_overlap(stated, figures(t)) for t in texts)
