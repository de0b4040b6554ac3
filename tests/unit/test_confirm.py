"""Which answer sentences the model is asked to confirm, and the statement it is shown (graph/confirm.py)."""

from __future__ import annotations

import math

import pytest

from graph.confirm import CONFIRMED_AT_MOST, p_yes, to_confirm, window_of
from graph.verify import sentences

GUIDE = ("3.1 Schemes. The full scheme installs everything. Disk space needed: 7239 MB. "
         "The basic scheme installs plain TeX and LaTeX. The minimal scheme installs plain TeX only.")


def test_a_sentence_stating_a_value_is_shown_with_the_statement_that_holds_it() -> None:
    # held-back batch 20: "How much disk space does the TeX Live basic scheme need?" answered with the full
    # scheme's figure; the check shows the model the line the figure is on, not the whole excerpt
    answer = "The TeX Live basic scheme needs 7239 MB of disk space [1]."
    [item] = to_confirm(sentences(answer), answer, {1: GUIDE}, "How much disk space does the basic scheme need?")
    assert item.sentence == answer
    assert "Disk space needed: 7239 MB." in item.window and "full scheme" in item.window
    assert "minimal scheme" not in item.window  # the statement and its neighbours only


def test_what_is_not_confirmed() -> None:
    question = "Which schemes does TeX Live 2022 offer?"
    # no number beyond the question's own; a number in no statement it cites (the claim checks' to strike)
    for answer in ("TeX Live 2022 offers the full, basic and minimal schemes [1].",
                   "The basic scheme needs 512 MB [1].", "The full scheme needs 7239 MB."):
        assert to_confirm(sentences(answer), answer, {1: GUIDE}, question) == [], answer
    assert window_of("It needs 7239 MB [1].", []) == ""


def test_at_most_so_many_sentences_are_confirmed() -> None:
    answer = " ".join(f"Line {n} says 7239 MB [1]." for n in range(CONFIRMED_AT_MOST + 2))
    assert len(to_confirm(sentences(answer), answer, {1: GUIDE}, "How much?")) == CONFIRMED_AT_MOST


def test_p_yes_is_read_off_the_first_words_alternatives_else_the_first_word() -> None:
    def token(text: str, **alternatives: float) -> dict[str, object]:
        return {"token": text, "top_logprobs": [{"token": w, "logprob": math.log(p)} for w, p in alternatives.items()]}

    assert p_yes([token(" ", Yes=0.9), token("No", No=0.3, Yes=0.1, Maybe=0.6)], "No") == pytest.approx(0.25)
    assert p_yes([], "Yes, the passage says so.") == 1.0 and p_yes([], "no.") == 0.0
    assert p_yes([token("The")], "The passage does not say.") is None  # neither: the sentence stands
