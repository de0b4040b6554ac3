"""The grader's verdicts read from its reply, and the relevance floor under them (graph/nodes/grade.py
makes the call): a structured reply's fields, P(yes) off its token log-probabilities, or, when no
structured reply came, a plain one read leniently (JSON, JSON in prose or a fence, "1: yes" lines).
An excerpt without a readable verdict is absent: a malformed reply never passes everything through.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, create_model

from graph.windows import stems
from lexicon import statements


class Grade(BaseModel):
    n: int
    reason: str = ""
    relevant: bool | str


class Grades(BaseModel):
    grades: list[Grade]


def verdicts_model(count: int) -> type[BaseModel]:
    """A schema with exactly `count` yes/no verdicts, so a grammar cannot let the reply run on."""
    fields: dict[str, Any] = {f"excerpt_{n}": (Literal["yes", "no"], ...) for n in range(1, count + 1)}
    return create_model(f"Grades{count}", **fields)


_YES = {"yes", "y", "true", "relevant", "1"}
_NO = {"no", "n", "false", "irrelevant", "not relevant", "0"}
_ITEM = re.compile(r'"n"\s*:\s*(\d+)[^{}]*?"relevant"\s*:\s*"?(yes|no|true|false)', re.IGNORECASE | re.DOTALL)
_LINE = re.compile(r"^\W*\[?(\d+)\]?\s*[:.)\-]\s*(?:\*\*)?\s*(yes|no|relevant|irrelevant|not relevant)\b",
                   re.IGNORECASE | re.MULTILINE)


def _verdict(value: bool | str) -> bool | None:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    return True if word in _YES else False if word in _NO else None


def parse_grades(text: str, count: int) -> dict[int, bool]:
    """Verdicts by excerpt number (1..count) that could be read; missing numbers are absent."""
    out: dict[int, bool] = {}
    candidates = [m.group(1) for m in re.finditer(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            parsed = Grades.model_validate(json.loads(candidate))
        except (json.JSONDecodeError, ValidationError):
            continue
        for g in parsed.grades:
            verdict = _verdict(g.relevant)
            if 1 <= g.n <= count and verdict is not None:
                out.setdefault(g.n, verdict)
        if out:
            return out
    for rx in (_ITEM, _LINE):
        for m in rx.finditer(text):
            n, verdict = int(m.group(1)), _verdict(m.group(2))
            if 1 <= n <= count and verdict is not None:
                out.setdefault(n, verdict)
        if out:
            return out
    return out


_VERDICT_AT = re.compile(r'"excerpt_(\d+)"\s*:\s*"')


def yes_share(alternatives: Sequence[Mapping[str, Any]], punctuation: str = ' "') -> float | None:
    """The weight of "yes" against "no" among a token's top alternatives (each word stripped of
    `punctuation`); None when neither is among them."""
    weight = {"yes": 0.0, "no": 0.0}
    for alternative in alternatives:
        word = str(alternative.get("token", "")).strip(punctuation).lower()
        if word in weight:
            weight[word] += math.exp(float(alternative.get("logprob", -math.inf)))
    return weight["yes"] / (weight["yes"] + weight["no"]) if weight["yes"] + weight["no"] > 0 else None


def yes_probabilities(tokens: Sequence[dict[str, Any]]) -> dict[int, float]:
    """P(yes) per excerpt number, read off the reply's token log-probabilities: at the token that
    starts each verdict, the weight of "yes" against "no" among the server's top alternatives
    (taken before the grammar, so both words are there). A verdict whose token lists neither word
    is absent (the sampled word then decides)."""
    pieces = [str(token.get("token", "")) for token in tokens]
    starts = list(itertools.accumulate((len(p) for p in pieces[:-1]), initial=0)) if pieces else []
    out: dict[int, float] = {}
    for m in _VERDICT_AT.finditer("".join(pieces)):
        at = bisect.bisect_right(starts, m.end()) - 1  # the token holding the verdict's first character
        if (share := yes_share(tokens[at].get("top_logprobs") or [])) is not None:
            out[int(m.group(1))] = share
    return out


# One statement holding this share of the question's words, and this many at least, speaks to it, whatever the
# cosine of its passage (evals/results/README.md, held-back batches 18 and 19): a short general-knowledge
# question ("What is the capital of France?") is not made relevant by a line that names its two words.
QUESTION_HELD = (0.5, 3)


def holds_the_question(text: str, question: str) -> bool:
    """Whether one statement of an excerpt's `text` holds QUESTION_HELD of the question's words (graph/windows.py
    `stems`): an almanac's line "05/28 Alan Turing submits On Computable
    Numbers for publication, 1936" speaks to when Turing submitted it, though the unrelated lines around it
    hold its passage's embedding far from the question."""
    share, least = QUESTION_HELD
    asked = stems(question)
    return any(len(shared := asked & stems(s)) >= least and len(shared) >= share * len(asked)
               for s in statements(text))


def above_floor(item: Mapping[str, Any], floor: float) -> bool:
    """Whether an excerpt (or its grade) is near enough the question to bear on it: a general-knowledge
    question's best excerpts sit below the floor, every development question's best above
    (evals/results/relevance_floor.md). A web page, not embedded, has no similarity to hold it to."""
    similarity = item.get("similarity")
    return similarity is None or similarity >= floor
