"""The claim check's examples: each check fails what a careful reader would strike, and passes the rest."""

from __future__ import annotations

import pytest

from graph.claims import CHECKS, adds_nothing, failures, name_not_cited, names_not_cited, year_not_cited
from graph.verify import sentences

REPORT = ("The pilot, Mr. John Alden, held a commercial certificate. The Cessna 172 crashed near Fullerton "
          "Municipal Airport on March 3, 2019. Visibility 10 miles.")
PROTOCOL = ("Principal Investigator: Dr. Maria Keane, Riverside Clinical Research Unit. "
            "20 participants will be recruited.")


@pytest.mark.parametrize("sentence", [
    "The principal investigator of the study is [1].",
    "The principal investigator of the study is.",
])
def test_a_blank_value_adds_nothing(sentence: str) -> None:
    assert adds_nothing(sentence, PROTOCOL, "Who is the principal investigator of the study?")


@pytest.mark.parametrize("sentence", [
    "Dr. Maria Keane is the principal investigator [1].",
    "20 people will be recruited [1].",
    "No, the study is not randomised [1].",
    "Yes [1].",
])
def test_an_answer_says_something(sentence: str) -> None:
    assert not adds_nothing(sentence, PROTOCOL, "Who is the principal investigator of the study?")


def test_a_name_from_another_document_is_not_in_the_cited_excerpt() -> None:
    question = "Who is the principal investigator of the study?"
    assert name_not_cited("The principal investigator is Dr. Alan Grant [1].", PROTOCOL, question)
    assert names_not_cited("The principal investigator is Dr. Alan Grant [1].", PROTOCOL, question) == ["Alan Grant"]
    assert not name_not_cited("The principal investigator is Dr. Maria Keane [1].", PROTOCOL, question)
    # a sentence's first word, names the question gives, and capitals of words the excerpt holds pass
    assert not name_not_cited("Twenty participants will be recruited [1].", PROTOCOL, question)
    assert not name_not_cited("The Fullerton Cessna crashed in 2019 [1].", REPORT,
                              "Where did the Fullerton Cessna crash?")
    assert not name_not_cited("The Riverside clinical research unit runs it [1].", PROTOCOL, question)


def test_a_year_the_cited_excerpt_does_not_give_fails() -> None:
    question = "When did the Cessna crash?"
    assert year_not_cited("It crashed on March 3, 2018 [1].", REPORT, question)
    assert not year_not_cited("It crashed on March 3, 2019 [1].", REPORT, question)
    assert year_not_cited("It crashed in 2018, at night [1].", REPORT, question)  # a year before a comma too
    assert not year_not_cited("Revenue was $2,019 million [1].", REPORT, question)  # an amount, not a year
    assert not year_not_cited("Revenue in 2017 was higher [1].", REPORT, "What was revenue in 2017?")


def test_only_sentences_that_cite_are_checked_and_each_failure_is_named() -> None:
    answer = "The principal investigator is Dr. Alan Grant [1]. 20 participants will be recruited [1]. The end."
    found = failures(sentences(answer), answer, {1: PROTOCOL}, "Who leads the study and how many take part?")
    assert [(f.sentence.strip(), f.check) for f in found] == [
        ("The principal investigator is Dr. Alan Grant [1].", "name_not_cited")]
    assert len({c.name for c in CHECKS}) == len(CHECKS)


def test_a_unit_names_no_line() -> None:
    # "Visibility 10 Miles" holds a 10 and the word miles; it says nothing of how far the crash was
    from graph.verify import names_its_line

    for one_figure in (True, False):  # asked in other words than the answer's: the line must name its thing
        assert not names_its_line("The crash site was 10 miles from the airport [1].", "Visibility 10 Miles",
                                  one_figure=one_figure)
        assert names_its_line("The crash site was 3 miles from the airport [1].",
                              "The wreckage was found 3 miles east of the airport.", one_figure=one_figure)


def test_an_answer_speaks_of_what_was_asked() -> None:
    from graph.claims import answers_the_question
    from graph.reading import read
    from graph.verify import sentences

    def answers(answer: str, question: str) -> bool:
        return answers_the_question(answer, read(question), sentences(answer))

    # what the local model wrote for questions the filings do not answer (answers_oos_holdout_2.md)
    assert not answers("[1] Corning had about 11,500 unexpired patents in various countries.",
                       "How many homes did Corning have in backlog at the end of 2020?")
    assert not answers("The trial enrols adults aged 18 to 65 [1].", "What dose of melatonin does the protocol give?")
    # a sentence on the question's own measure, a yes or no, a bare figure: left to the other checks
    assert answers("Bruce Perens took over as leader [2].", "Who took over as Debian leader when Ian Murdock left?")
    assert answers("No, the committee does not draw up designs itself [1].",
                   "Does the Technical Committee design new policy?")
    assert answers("The figure is 412 million [1].", "What was Aurora Widgets' total revenue in fiscal 2023?")
    # the kind a "who", "when" or "how long" question asks for answers it without its words
    assert answers("Ian Murdock [1].", "Who founded Debian?")
    assert answers("It was adopted on March 26th, 2022 [1].", "When was the constitution ratified?")
    assert answers("The voting period lasts 2 weeks [1].", "How long is a developers' vote open for?")
    assert not answers("The voting period lasts 2 weeks [1].", "Who counts the votes of a developers' ballot?")
    # one sentence that answers is enough, whichever sentence the model put its citation on
    assert answers("The figure is 5,300 [1]. Other words follow.", "How many people did Aurora Widgets employ?")
    assert answers("The company had 5,300 employees [1]. It also sold widgets [2].",
                   "How many people did Aurora Widgets employ?")


def test_a_declining_answer_is_a_refusal() -> None:
    from graph.claims import declines
    from graph.verify import sentences

    def declined(answer: str) -> bool:
        return declines(answer, sentences(answer))

    # what the local model wrote for a held-back out-of-scope question (answers_oos_holdout_3_base.md)
    assert declined("The excerpts do not provide information on the colour of Best Buy employees' shirts [1].")
    assert declined("I cannot determine the dose from the excerpts. The trial is described in [2].")
    assert not declined("The dose is not 10 mg/kg but 1-1.5 mg/kg [1].")
    assert not declined("Revenue was 412 million [1]. The excerpts do not say what drove it.")


def test_a_figure_of_the_question_adds_nothing() -> None:
    from graph.claims import adds_nothing

    assert adds_nothing("The logo of 3M was designed by [1].", "", "Who designed the logo of 3M?")
    assert not adds_nothing("The logo of 3M was designed in 1977 [1].", "", "Who designed the logo of 3M?")
