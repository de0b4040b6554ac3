"""Retrieved text is data, never instructions: each sentence of an excerpt that reads as an
instruction to the model is cut out and replaced by a marker (graph/nodes/screen.py applies it).

When a flagged "sentence" is really several PDF lines or clauses run together, only the flagged ones
go (unless what would stay still reads as an instruction). The rest of the excerpt, its facts, stays:
an excerpt is dropped only when nothing of substance is left. Which sentence is an instruction is
the classifier's call (providers/classifiers/instruction.py).
"""

from __future__ import annotations

import re

from lexicon import alnum_words
from providers.classifiers.instruction import InstructionClassifier

MARKER = "[removed: text that looked like an instruction to the assistant]"

# Sentence ends, blank lines and table cell bars; a single newline is only PDF line wrapping.
_SPLIT = re.compile(r"((?<=[.!?])\s+(?=[A-Z\"'(\[])|\n\s*\n\s*|\s*\|\s*)")
# Inside a flagged sentence: its lines and clauses, so an injected line can go alone.
_FINE = re.compile(r"(\s*\n\s*|(?<=[.!?:;])\s+)")
MIN_LEFT = 40  # letters and digits an excerpt must keep, once screened, to be worth showing


def _norm(piece: str) -> str:
    return " ".join(piece.split())


def sentences(text: str) -> list[str]:
    """Sentences with whitespace (PDF line wraps included) collapsed."""
    return [s for s in (_norm(part) for part in _SPLIT.split(text)[::2]) if s]


def _lines(sentence: str) -> list[list[int]]:
    """The sentence's lines and clauses as groups of piece indices (even positions of _FINE.split): a
    piece that starts in lower case after one that does not end a sentence continues it (a wrapped line)."""
    pieces = _FINE.split(sentence)
    groups: list[list[int]] = []
    for i in range(0, len(pieces), 2):
        text = _norm(pieces[i])
        if not text:
            continue
        previous = _norm(pieces[groups[-1][-1]]) if groups else ""
        if groups and text[0].islower() and not previous.endswith((".", "!", "?")):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _cut(sentence: str, flagged_whole: bool, classifier: InstructionClassifier) -> tuple[str, list[str]]:
    """The sentence with its instruction lines replaced by MARKER when the rest is clean; the whole
    sentence replaced when it is flagged and cannot be split so; unchanged otherwise."""
    pieces = _FINE.split(sentence)
    groups = _lines(sentence)
    if len(groups) > 1:
        texts = [" ".join(_norm(pieces[i]) for i in g) for g in groups]
        flagged = [n for n, t in enumerate(texts) if classifier.is_instruction(t)]
        rest = " ".join(t for n, t in enumerate(texts) if n not in flagged)
        if flagged and rest and not classifier.is_instruction(rest):
            for n in flagged:
                first, *others = groups[n]
                pieces[first] = MARKER
                for i in others:  # the group's other pieces and the separators inside it go too
                    pieces[i - 1] = pieces[i] = ""
            return "".join(pieces), [texts[n] for n in flagged]
    return (MARKER, [_norm(sentence)]) if flagged_whole else (sentence, [])


def screen_text(text: str, classifier: InstructionClassifier) -> tuple[str, list[str]]:
    """(text with instruction-like sentences, or lines of them, replaced by MARKER, the removed text)."""
    parts = _SPLIT.split(text)  # sentences at even positions, separators at odd ones
    removed: list[str] = []
    for i in range(0, len(parts), 2):
        sentence = _norm(parts[i])
        if sentence:
            parts[i], cut = _cut(parts[i], classifier.is_instruction(sentence), classifier)
            removed += cut
    return ("".join(parts) if removed else text), removed


def nothing_left(clean: str) -> bool:
    """True when a screened excerpt holds too little besides markers to be worth showing."""
    return sum(map(len, alnum_words(clean.replace(MARKER, "")))) < MIN_LEFT


def screen_excerpt(text: str, classifier: InstructionClassifier) -> tuple[str | None, list[str]]:
    """(the excerpt as the model will see it, or None when it is dropped; the removed text)."""
    clean, removed = screen_text(text, classifier)
    return (None if removed and nothing_left(clean) else clean), removed
