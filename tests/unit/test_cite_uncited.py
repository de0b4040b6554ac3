"""An answer that cites nothing cites the excerpt holding its words (graph/citations.py `cite_uncited`)."""

from __future__ import annotations

from graph.citations import cite_uncited

TEXTS = ["Release history. Debian 6.0 squeeze was released on February 6th, 2011 after two years of work.",
         "The FHS says that /tmp may be cleared at boot."]


def test_a_sentence_citing_nothing_cites_the_excerpt_with_its_words() -> None:
    answer = "Debian 6.0 squeeze was released on February 6th, 2011. This is in the excerpt."
    assert cite_uncited(answer, TEXTS, "When was Debian 6.0 released?").startswith(
        "Debian 6.0 squeeze was released on February 6th, 2011 [1].")


def test_general_knowledge_and_cited_answers_are_left_as_they_are() -> None:
    assert cite_uncited("Lima is the capital of Peru.", TEXTS, "What is the capital of Peru?") == \
        "Lima is the capital of Peru."
    cited = "The FHS says /tmp may be cleared [2]."
    assert cite_uncited(cited, TEXTS, "May /tmp be cleared?") == cited
