"""Talk of the system's mechanics taken out of an answer: it speaks of the documents, not of how it
was made ("as stated in the first excerpt"). A sentence that only points to where something is
written gives its citation markers to the claim before it, so the claim is checked against them.
"""

from __future__ import annotations

import re

from graph.citations import MARK, before_stop
from graph.verify import sentences
from lexicon import DEMONSTRATIVES, EXCERPT_TALK, INFLECTION, SOURCE_NAMED, letter_words

# A sentence that only says where something is written ("This information is found in [1].")
_POINTER_WORDS = frozenset({"this", "that", "these", "the", "information", "data", "figure", "figures", "it", "is",
                            "are", "was", "can", "be", "found", "stated", "shown", "given", "mentioned", "noted",
                            "listed", "provided", "reported", "in", "on", "from", "according", "to", "see", "source",
                            "and", "both", "also", "occurred", "occurs", "happened", "described", "explained",
                            "discussed", "detailed", "specified", "written", "cited", "says", "states", "explains",
                            "describes", "mentions", "indicates", "shows", "refer", "refers", "line", "lines",
                            "section", "sections", "paragraph", "paragraphs", "clause", "clauses", "article",
                            "articles", "part", "parts", "at", "first", "second", "third", "fourth", "fifth",
                            "sources", "as", "document", "documents", "page", "pages", "excerpt", "excerpts", "answer",
                            "correct", "relevant", "which", "rests", "rest", "based", "quoted", "taken", "drawn",
                            "comes", "come", "derived", "supported", "confirmed", "appears", "appear", "seen",
                            "contains", "holds"})
# ... in any inflection ("provides" as "provided", "contained" as "contains")
_POINTER_ROOTS = frozenset(INFLECTION.sub("", w) for w in _POINTER_WORDS)
# ... after a stop and a space (a version's or a decimal's point, "Grace-5.1.25", ends nothing) to the sentence's
# own end ("... at line 10.3."): never cut out of a longer sentence
_POINTER = re.compile(
    r"(?:(?<=^)|(?<=[.!?])(?=\s))\s*((?:[^.!?]|[.!?](?=\S))*?((?:(?:[\s,]*|\s+and\s+)\[\d+(?:,\s*\d+)*\])+)"
    r"(?:[^.!?\[]|[.!?](?=[^\s\[]))*(?:[.!?]|$))(?=\s|$)")


def _only_points(words: list[str]) -> bool:
    """Words that only say where something is written: pointer words, after "this" and the one word it names
    ("This nickname is mentioned in [1].", "This version is listed in [3].")."""
    if words[0] in DEMONSTRATIVES and len(words) > 2:
        words = words[2:]
    return all(_points(w) for w in words)


def _points(word: str) -> bool:
    return INFLECTION.sub("", word) in _POINTER_ROOTS  # every pointer word's own root is among them


def _pointers_merged(answer: str) -> str:
    """Each pointer sentence removed, its citations given to the sentence before it, which is
    the claim it points for: the claim is then checked against what it cites."""
    out = answer
    for m in reversed(list(_POINTER.finditer(answer))):
        words = letter_words(MARK.sub("", SOURCE_NAMED.sub("", m.group(1))).lower())
        before = out[:m.start()].rstrip()
        if not words or not _only_points(words) or not before:
            continue
        end = len(before) - 1 if before[-1] in ".!?" else len(before)
        claim = before[before.rfind(".", 0, end) + 1:]  # the sentence it points for: its markers need no repeat
        markers = "".join(x for x in dict.fromkeys(marker.group(0) for marker in MARK.finditer(m.group(2)))
                          if x not in claim)
        gap = "" if before[:end].endswith("]") or not markers else " "  # "[2][1]", not "[2] [1]"
        out = before[:end] + gap + markers + before[end:] + out[m.end():]
    return out


# every word the talk of excerpts may be made of (EXCERPT_TALK's own, with the regex's letters: harmless)
_TALK_WORDS = frozenset(letter_words(EXCERPT_TALK.pattern.lower()))


def opens_no_pointer(begun: str) -> bool:
    """Whether a sentence begun so (the text of it written so far) can no longer change the one
    before it: a pointer sentence gives that one its markers (`_pointers_merged`), and so does a
    first clause of such words beside talk of excerpts ("This is stated in excerpt [2], which ...":
    `without_mechanics`). A whole word before any comma that is neither a pointer's nor the talk's
    rules both out, whatever follows (graph/nodes/early.py sends the sentence before it then)."""
    head = MARK.sub(" ", SOURCE_NAMED.sub("", begun).split(",", 1)[0])
    if "," not in begun:
        head = re.sub(r"[A-Za-z]+$", "", head)  # the last word may still grow ("Thi" -> "This")
    words = letter_words(head.lower())
    if words and words[0] in DEMONSTRATIVES:
        words = words[2:]  # the word "this" names may open a pointer too (`_only_points`: "This nickname is ...")
    return any(not _points(w) and w not in _TALK_WORDS for w in words)


_CLAUSE_END = re.compile(r",|\swhich\s|[\"“]")


def _with_marks(sentence: str, marks: list[str]) -> str:
    return before_stop(sentence, "".join(marks)) if marks else sentence


def _opens_quote(sentence: str) -> bool:
    """Whether `sentence` leaves a quotation open: an odd number of straight double quotes, or more “ than ”."""
    return sentence.count('"') % 2 == 1 or sentence.count("“") > sentence.count("”")


def _closes_quote(sentence: str) -> bool:
    """Whether `sentence`, read inside an open quotation, ends it."""
    return sentence.count('"') % 2 == 1 or sentence.count("”") > sentence.count("“")


def without_mechanics(answer: str) -> str:
    """The answer without talk of excerpts: it speaks of the documents, not of how it was made. A
    citation marker inside the talk removed ("as stated in excerpt [1]") stays with its sentence."""
    merged = _pointers_merged(answer)
    pieces: list[str] = []
    quoting = False  # inside a quotation that a sentence taken out opened: it goes with that sentence
    for start, end in sentences(merged):
        sentence = merged[start:end]
        if quoting:
            quoting = not _closes_quote(sentence)
            continue
        words = letter_words(sentence.lower())
        if words and not MARK.search(sentence) and _only_points(words):
            quoting = _opens_quote(sentence)
            continue  # "This information is found in the excerpt.": where, citing nothing
        talk = [m.group(0) for m in EXCERPT_TALK.finditer(sentence)]
        cleaned = EXCERPT_TALK.sub("", sentence)
        markers = [x.group(0) for t in talk for x in MARK.finditer(t)]
        # the first clause: up to a comma, "which" or a quotation ("... [2] which states \"...\"")
        head = letter_words(MARK.sub("", _CLAUSE_END.split(cleaned, maxsplit=1)[0]).lower())
        if talk and pieces and head and _only_points(head):
            # "This is stated in excerpt [1], which describes ...": where, and more of the excerpt
            markers += [x.group(0) for x in MARK.finditer(cleaned)]
            pieces[-1] = _with_marks(pieces[-1], [x for x in dict.fromkeys(markers) if x not in pieces[-1]])
            quoting = _opens_quote(sentence)  # '..., where it states: "Appendix A ... commercially.' and on
            continue
        kept = [x for x in dict.fromkeys(markers) if x not in cleaned]
        pieces.append(_with_marks(cleaned, kept))
    cleaned = "".join(pieces)
    cleaned = re.sub(r"\s+([.,;:])", r"\1", cleaned)
    cleaned = re.sub(r"(^|[.!?]\s+)[,;:]\s*", r"\1", cleaned)
    cleaned = re.sub(r"(?<=[.!?])[,;:]\s+", " ", cleaned)  # 'GPL. The excerpt [3] states: "Sed ...' -> 'GPL. "Sed
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), cleaned).strip()
