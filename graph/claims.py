"""The claim check: what an answer sentence says must be in what it cites, whatever the document.

Each check is a named object with the reason a reader would give and examples (tests/unit/
test_claims.py holds them). A sentence citing excerpts fails a check when:
- `adds_nothing`: beyond the question's own words it says nothing, no figure and no yes or no:
  the value was left blank ("The principal investigator of the study is [1].");
- `name_not_cited`: it names someone or something (capitalised words past its first) that neither
  the excerpts it cites nor the question hold: a name taken from another report;
- `year_not_cited`: it gives a year that neither the excerpts it cites nor the question hold: a
  date of the wrong year.
Figures are checked figure by figure by graph/verify.py. What fails is removed; what passes is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graph.citations import MARK
from graph.windows import stems
from lexicon import FUNCTION_WORDS
from storage.periods import YEAR

# Words that answer a yes/no question: an answer sentence holding one says something.
POLARITY = frozenset(["yes", "no", "not", "never", "none", "neither", "nor", "cannot", "without"])
_NAME = re.compile(r"\b[A-Z][A-Za-z'’.-]*[A-Za-z](?:\s+(?:of|and|&|de|van|von|du|la)?\s*[A-Z][A-Za-z'’.-]*[A-Za-z])*\b")
_WORDS = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def _body(sentence: str) -> str:
    return MARK.sub(" ", sentence)


def adds_nothing(sentence: str, cited: str, question: str) -> bool:
    body = _body(sentence)
    if any(ch.isdigit() for ch in body) or _words(body) & POLARITY:
        return False
    return not (stems(body) - stems(question))


def names_not_cited(sentence: str, cited: str, question: str) -> list[str]:
    """The names of `sentence` (past its first word) with a word neither `cited` nor `question` holds."""
    held = _words(cited) | _words(question)
    body = _body(sentence)
    first = re.match(r"\s*[\W_]*", body)
    start = first.end() if first else 0
    out = []
    for m in _NAME.finditer(body):
        raw = m.group(0).split()
        if m.start() == start:  # a sentence's first word is capitalised by orthography
            raw = raw[1:]
        words = [w for w in _WORDS.findall(" ".join(raw).lower()) if w not in FUNCTION_WORDS and len(w) > 1]
        if any(w not in held for w in words):
            out.append(m.group(0))
    return out


def name_not_cited(sentence: str, cited: str, question: str) -> bool:
    return bool(names_not_cited(sentence, cited, question))


def year_not_cited(sentence: str, cited: str, question: str) -> bool:
    held = set(YEAR.findall(cited)) | set(YEAR.findall(question))
    return any(y not in held for y in YEAR.findall(_body(sentence)))


@dataclass(frozen=True)
class Check:
    name: str
    why: str
    fails: Callable[[str, str, str], bool]  # (sentence, the text it cites, the question) -> it fails


CHECKS: tuple[Check, ...] = (
    Check("adds_nothing", "says nothing beyond the question: the value was left blank", adds_nothing),
    Check("name_not_cited", "names someone or something its cited excerpts do not", name_not_cited),
    Check("year_not_cited", "gives a year its cited excerpts do not", year_not_cited),
)


@dataclass(frozen=True)
class Failure:
    sentence: str
    check: str


def failures(spans: list[tuple[int, int]], answer: str, texts: Mapping[int, str], question: str,
             checks: tuple[Check, ...] = CHECKS) -> list[Failure]:
    """The sentences of `answer` (its `spans`) that cite excerpts (`texts` by [n]) and fail a check."""
    out = []
    for start, end in spans:
        sentence = answer[start:end]
        cited = [int(x) for m in MARK.finditer(sentence) for x in m.group(1).split(",")]
        if not cited or not sentence.strip():
            continue
        text = "\n".join(texts.get(n, "") for n in cited)
        failed = next((c for c in checks if c.fails(sentence, text, question)), None)
        if failed is not None:
            out.append(Failure(sentence, failed.name))
    return out
