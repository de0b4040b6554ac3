"""What a figure of an excerpt is about (graph/verify.py `names_its_line`): in running text its whole
sentence, wrapped lines joined; in a table its row; the question's words that say where to look
(lexicon.py `without_source`) do not count as what it asks. Each case below was a correct draft
refused, or a wrong one that must stay refused."""

from __future__ import annotations

from graph.verify import Source, verify, words_of
from lexicon import without_source

REFUSAL = "The documents don't say."
# a licence's definition, wrapped as the text file wraps it: the figure's line names none of it
DEFINITION = Source(1, """1.14. "You" (or "Your")
means an individual or a legal entity exercising rights under this
License. For purposes of this definition, "control" means (a) the power, direct
or indirect, to cause the direction or management of such entity,
whether by contract or otherwise, or (b) ownership of more than
fifty percent (50%) of the outstanding shares or beneficial
ownership of such entity.

2. License Grants""")
STUDY = Source(1, (  # wrapped as the history's PDF is
    "This was studied in an article called Counting potatoes: The size of Debian 2.2, quoting:\n"
    "We show that Debian 2.2 includes more than 55,000,000 physical source lines of code. It would cost close to\n"
    "to develop Debian 2.2. In addition, we offer both an analysis of the programming languages used in the "
    "distribution (C amounts\n"
    "for about 70%, C++ for about 10%, LISP and Shell are around 5%, with many others to follow), and the largest\n"
    "packages. The release had 2,600 binary packages."))
TABLE = Source(1, """Segment results
Subscription revenue | 612 | 540
Operating margin | 23.0% | 21.5%
Headcount | 70 | 64""")


def kept(answer: str, question: str, source: Source) -> bool:
    return not verify(answer, refusal=REFUSAL, excerpts=[source], question=question).refused


def test_a_wrapped_sentence_says_what_its_figure_is_of() -> None:
    question = "Under the MPL's definition of You, what share of an entity's outstanding shares amounts to control?"
    assert kept("Control is ownership of more than fifty percent (50%) of the outstanding shares [1].", question,
                DEFINITION)
    # the same figure attached to something its sentence does not speak of
    assert not kept("An entity's board needs 50% of its directors to agree [1].",
                    "What share of an entity's directors must agree?", DEFINITION)


def test_where_to_look_is_not_what_is_asked() -> None:
    assert without_source("According to the Counting potatoes article, what share of code is in C?") == \
        "what share of code is in C?"
    assert without_source("What share do LISP and Shell each account for, per the Counting potatoes study?") == \
        "What share do LISP and Shell each account for?"
    assert without_source("If I fix it, how long do I have?") == "If I fix it, how long do I have?"  # a condition
    assert kept("The Counting potatoes study found that LISP and Shell each account for about 5% of Debian 2.2's "
                "code [1].", "What share of Debian 2.2's code do LISP and Shell each account for, per the Counting "
                "potatoes study?", STUDY)
    assert kept("70% of Debian 2.2's code is written in C [1].",
                "According to the Counting potatoes article, what share of Debian 2.2's code is written in C?", STUDY)


def test_a_one_letter_name_is_a_word_an_article_or_a_language_suffix_is_not() -> None:
    assert {"c", "b"} <= words_of("C amounts for about 70% of Class B shares")
    assert not {"a", "i", "c"} & words_of("A share I hold is C++ code")


def test_a_figure_of_another_sentence_or_another_row_stays_refused() -> None:
    # 2,600 is the release's packages, not lines of code; 70 is headcount, not a margin
    assert not kept("Debian 2.2 has 2,600 lines of code [1].", "How many lines of code does Debian 2.2 have?", STUDY)
    assert not kept("The operating margin was 70% [1].", "What was the operating margin?", TABLE)
    assert kept("The operating margin was 23.0% [1].", "What was the operating margin?", TABLE)


def test_a_figure_of_the_other_side_of_a_contrast_is_no_answer() -> None:
    # the paper's reference line is the nominal coverage; the question asks the empirical one it does not give
    figure = Source(1, "Figure 3: Experiment II. Coverage of the wild cluster bootstrap against the number of\n"
                       "clusters G. The horizontal reference line indicates the nominal coverage of 0.95.")
    question = "What empirical coverage did the wild cluster bootstrap reach with G = 10 clusters?"
    assert not kept("The empirical coverage reached with G = 10 clusters was 0.95 [1].", question, figure)
    # a line naming both sides names the one asked
    both = Source(1, "With G = 10 clusters the empirical coverage of the wild cluster bootstrap was 0.91, short of "
                     "the nominal coverage of 0.95.")
    assert kept("The empirical coverage with G = 10 clusters was 0.91 [1].", question, both)
    # a minimum is no maximum; what names neither side is left to the other checks
    rules = Source(1, "The committee has a minimum of 4 members. Votes are open for 2 weeks.")
    assert not kept("The committee has at most 4 members [1].", "What is the maximum number of committee members?",
                    rules)
    assert kept("The committee has at least 4 members [1].", "What is the minimum number of committee members?",
                rules)
