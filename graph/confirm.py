"""Which sentences of an answer the model is asked to confirm, and what it is shown for each.

A small model answers a question its documents do not answer with a value the cited excerpt writes of
another thing: "The TeX Live basic scheme needs 7239 MB" from the full scheme's line, "install-tl requires
Perl 8.5" from Tcl/Tk's. The value is found in the excerpt it cites, so no check of where a figure comes
from strikes it, and no word-level or embedding test separated these from right answers on the held-back
batches (evals/results/README.md). Shown only the statement that holds the value, with its neighbours, and
the question, the same model tells a line that answers from one that does not far better than it avoids
writing the value: each sentence stating a number the question does not is confirmed so (graph/nodes/verify.py
asks; below the confirm floor it is dropped). A sentence whose value is in no statement it cites is left
to the claim checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graph.citations import marked
from graph.grading import yes_share
from graph.windows import stems
from lexicon import DIGITS, MARK, statements

# Answers state one or two values; past this many the rest are not confirmed (each is a model call).
CONFIRMED_AT_MOST = 2
NOT_CONFIRMED = "not_confirmed"  # the claim record's name for a sentence so dropped
WINDOW_CHARS = 1500  # what the model is shown: the statement and its neighbours, cut to this


@dataclass(frozen=True)
class ToConfirm:
    sentence: str  # as it stands in the answer
    window: str  # the cited statement holding its value, with the statements either side


def _numbers(text: str) -> set[str]:
    return set(DIGITS.findall(MARK.sub(" ", text)))


def window_of(sentence: str, texts: list[str]) -> str:
    """The statement of `texts` holding most of `sentence`'s numbers (then most of its words), with the
    statement before and after it; "" when none holds one."""
    wanted, words = _numbers(sentence), stems(MARK.sub(" ", sentence))
    best, window = (0, 0), ""
    for text in texts:
        parts = statements(text)
        for i, part in enumerate(parts):
            score = (len(wanted & _numbers(part)), len(words & stems(part)))
            if score[0] and score > best:
                best, window = score, " ".join(parts[max(0, i - 1): i + 2])
    return window[:WINDOW_CHARS]


def to_confirm(spans: list[tuple[int, int]], answer: str, texts: Mapping[int, str], question: str) -> list[ToConfirm]:
    """The sentences of `answer` (its `spans`) stating a number the question does not, each with the window
    of its cited excerpts that holds it (at most CONFIRMED_AT_MOST)."""
    asked = _numbers(question)
    out: list[ToConfirm] = []
    for a, b in spans:
        sentence = answer[a:b]
        if not (_numbers(sentence) - asked):
            continue
        cited = [texts[n] for n in dict.fromkeys(marked(sentence)) if n in texts]
        if window := window_of(sentence, cited):
            out.append(ToConfirm(sentence, window))
        if len(out) == CONFIRMED_AT_MOST:
            break
    return out


def p_yes(tokens: Sequence[Mapping[str, Any]], reply: str) -> float | None:
    """P(yes) of a yes/no reply: at its first word's token, the weight of "yes" against "no" among the
    server's top alternatives where it gives them; else 1 or 0 by the reply's first word; None when the reply
    opens with neither."""
    first = next((t for t in tokens if str(t.get("token", "")).strip()), None)
    if (share := yes_share((first or {}).get("top_logprobs") or [], ' "\'.,')) is not None:
        return share
    said = reply.strip().split(maxsplit=1)[0].strip(' "\'.,!').lower() if reply.strip() else ""
    return {"yes": 1.0, "no": 0.0}.get(said)
