"""Every figure an answer states is checked before the user sees it (graph/verify.py): the failure
classes of issue 24, each pinned on an invented company's statements."""

from __future__ import annotations

import json

from graph.calc import Fact, calculate
from graph.figures import Scale, read_figures
from graph.verify import Source, sentences, verify

REFUSAL = "The documents don't say."
STATEMENT = Source(1, """Marlowe Kitchens, Inc.
Consolidated Statements of Operations
(In thousands, except per share data)
Total revenues | $ 1,693,954 | $ 1,402,118
Net loss | (45,210) | 12,004
Diluted net income per share | $ 3.21 | $ 2.64
""")
MILLIONS = Source(2, """Segment results (in millions, except per share amounts and percentages)
Subscription revenue | 612 | 540
Operating margin | 23.0% | 21.5%
Dividends declared per share | $ 0.48 | $ 0.44
""")
PROSE = Source(3, "Marlowe operates in three segments and leases its headquarters in Dayton.")
EXCERPTS = [STATEMENT, MILLIONS, PROSE]


def check(answer: str, question: str = "", **kwargs: object) -> object:
    return verify(answer, refusal=REFUSAL, excerpts=EXCERPTS, question=question, **kwargs)  # type: ignore[arg-type]


def test_a_figure_copied_from_the_cited_excerpt_is_verified() -> None:
    report = check("Total revenues were $1,693.954 million [1].")
    assert report.verified and report.answer == "Total revenues were $1,693.954 million [1]."
    [figure] = report.figures
    assert figure.status == "excerpt" and figure.excerpt == 1 and figure.action == "kept"
    assert figure.held == "$ 1,693,954 (In thousands, except per share data)"
    assert check("Total revenues were $1.69 billion [1].").verified  # rounded as shown


def test_a_table_in_thousands_read_as_millions_is_restated_correctly() -> None:
    report = check("Total revenues were $1,693,954 million [1].")
    assert report.answer == "Total revenues were $1,693.954 million [1]."
    [figure] = report.figures
    assert figure.status == "unsupported" and not figure.verified
    assert figure.action == "replaced" and figure.replaced_by == "$1,693.954 million" and figure.excerpt == 1
    assert not report.verified and not report.refused
    # the question's unit decides how a bare amount is read: 1,693,954 "in USD millions" is wrong too
    asked = check("Revenue was 1,693,954 [1].", "What were total revenues in USD millions?")
    assert asked.answer == "Revenue was $1,693.954 [1]."
    assert check("Revenue was 1,694 [1].", "What were total revenues in USD millions?").verified
    assert check("Revenue was 1,693,954 [1].").verified  # asked no unit, it copies the table's digits


def test_a_figure_absent_from_the_documents_drops_its_sentence() -> None:
    report = check("Diluted EPS was $3.21 per share [1]. Subscription revenue was $713 million [2].")
    assert report.answer == "Diluted EPS was $3.21 per share [1]."
    assert report.dropped == ["Subscription revenue was $713 million [2]."]
    assert [f.action for f in report.figures] == ["kept", "dropped"]
    assert not report.verified and not report.refused


def test_an_answer_whose_figures_all_fail_becomes_the_refusal() -> None:
    report = check("Subscription revenue was $713 million [2]. This reflects strong renewals [2].")
    assert report.refused and report.answer == REFUSAL
    assert report.original.startswith("Subscription revenue")
    assert check("[1].").refused  # nothing left to say


def test_negatives_in_parentheses_are_said_in_words() -> None:
    report = check("Marlowe reported a net loss of $45.2 million [1].")
    assert report.verified and report.figures[0].held == "(45,210) (In thousands, except per share data)"


def test_per_share_rows_under_in_millions_are_dollars() -> None:
    assert check("Dividends declared were $0.48 per share [2].").verified
    report = check("Diluted EPS was $3.21 million [1].")  # the header's scale wrongly applied
    assert report.answer == "Diluted EPS was $3.21 [1]."
    assert report.figures[0].action == "replaced"


def test_percentage_rows_are_not_scaled_and_points_are_not_percent() -> None:
    assert check("Operating margin was 23.0% [2].").verified
    margins = [Fact(1, read_figures(MILLIONS.text)[2], "Operating margin", 2, "FY2023"),
               Fact(2, read_figures(MILLIONS.text)[3], "Operating margin", 2, "FY2022")]
    result = calculate({"op": "difference", "operands": [1, 2]}, margins)
    report = check("Operating margin rose 1.5 percentage points [2].", facts=margins, result=result)
    assert report.verified and report.figures[0].status == "calculation"
    loose = check("Operating margin rose 1.5% [2].", facts=margins, result=result)
    assert loose.answer == "Operating margin rose 1.5 percentage points [2]."  # a point rise is not a 1.5% rise


def test_a_ratio_the_question_defines_rests_on_the_calculation() -> None:
    facts = [Fact(1, read_figures(MILLIONS.text)[0], "Subscription revenue", 2, "FY2023"),
             Fact(2, read_figures(STATEMENT.text)[0], "Total revenues", 1, "FY2023")]
    question = "What is subscription revenue divided by total revenues, rounded to two decimal places?"
    result = calculate({"op": "ratio", "operands": [1, 2]}, facts, question)
    assert result.working == "612 million / 1,693,954 thousand = 0.36 [2][1]"
    report = check(f"The ratio is 0.36: {result.working}.", question, facts=facts, result=result)
    assert report.verified, report.figures
    statuses = [(f.text, f.status) for f in report.figures]
    assert ("0.36", "calculation") in statuses and ("612 million", "fact") in statuses
    assert check("It is 36.1% of revenues [1][2].", question, facts=facts, result=result).verified  # as percent
    wrong = check("The ratio is 0.42 [1][2].", question, facts=facts, result=result)
    assert wrong.refused  # the model's own arithmetic is not shown to the user


def test_a_fact_is_named_in_the_report() -> None:
    facts = [Fact(7, read_figures(MILLIONS.text)[0], "Segment results › Subscription revenue", 2, "FY2023")]
    report = check("Subscription revenue was $612 million [2].", facts=facts)
    [figure] = report.figures
    assert (figure.status, figure.fact, figure.excerpt) == ("fact", 7, 2)
    assert figure.held == ("Segment results › Subscription revenue: 612 "
                           "(in millions, except per share amounts and percentages)")
    assert json.loads(report.model_dump_json())["figures"][0]["fact"] == 7  # the API's and CLI's JSON


def test_a_coarse_rounding_is_replaced_by_the_source_figure() -> None:
    report = check("Subscription revenue was about $600 million [2].")
    assert report.answer == "Subscription revenue was about $612 million [2]."


def test_a_figure_at_the_wrong_scale_is_restated_in_its_sources_unit() -> None:
    report = check("Subscription revenue was $540 thousand [2].")  # the prior year's 540, in millions
    assert report.answer == "Subscription revenue was $540 million [2]."


def test_two_different_candidates_are_no_repair() -> None:
    ambiguous = Source(4, "(in millions)\nA | 1,005 | 1,020")  # "$1 billion" rounds either
    coarse = verify("Revenue was $1 billion [4].", refusal=REFUSAL, excerpts=[ambiguous])
    assert coarse.refused


def test_the_questions_own_figures_and_small_counts_need_no_source() -> None:
    report = check("No: revenue of $1.69 billion [1] exceeded the $1,500 million threshold.",
                   "Did revenue exceed $1,500 million?")
    assert report.verified and [f.status for f in report.figures] == ["excerpt", "question"]
    assert check("Marlowe has 3 segments [3].").figures == []  # not checked: "three" in the excerpt


def test_a_known_table_scale_overrides_the_text() -> None:
    table = Source(5, "Net revenue | 8,120", scale=Scale(1e6, money=True))
    assert verify("Net revenue was $8.12 billion [5].", refusal=REFUSAL, excerpts=[table]).verified


def test_sentences_keep_decimals_and_abbreviations_whole() -> None:
    text = "Sales in the U.S. were $1.2 billion [1]. Margin was 12.5% [2].\nNext line"
    assert [text[a:b] for a, b in sentences(text)] == [
        "Sales in the U.S. were $1.2 billion [1]. ", "Margin was 12.5% [2].\n", "Next line"]


def test_a_figure_taken_from_a_line_about_something_else_is_unsupported() -> None:
    # issue 24's held-back out-of-scope batch: "Amcor had 109 subscribers" passed on a 109 of another line
    report = check("Marlowe had 612 subscribers at year end [2].", "How many subscribers did Marlowe have?",
                   ignore={"marlowe"})
    assert report.refused and [f.status for f in report.figures] == ["unsupported"]
    # the company's own name is no row: a line naming it says nothing of what the figure is
    named = Source(6, "Marlowe Kitchens | 2,210\nEmployees | 5,400")
    assert verify("Marlowe had 2,210 stores [6].", refusal=REFUSAL, excerpts=[named],
                  ignore={"marlowe", "kitchen"}).refused
    # a sentence naming the line's row is supported, and so is one whose row is named on the line before
    assert check("Subscription revenue was $612 million [2].").verified
    wrapped = Source(7, "Marlowe's net sales for the year\nreached $1,240 million, up 4%.")
    assert verify("Net sales were $1,240 million [7].", refusal=REFUSAL, excerpts=[wrapped]).verified


def test_a_figure_answering_the_question_rests_on_a_line_about_what_was_asked() -> None:
    # issue 24's held-back batch: "average revenue per user was $10.21" rested on a line of earnings per share
    eps = Source(8, "Diluted earnings per share | $ 10.21 | $ 9.40")
    question = "What was Marlowe's average revenue per user in 2022?"
    assert verify("Marlowe's average revenue per user in 2022 was $10.21 [8].", refusal=REFUSAL, excerpts=[eps],
                  question=question, ignore={"marlowe"}).refused
    assert verify("Diluted earnings per share were $10.21 [8].", refusal=REFUSAL, excerpts=[eps],
                  question="What were diluted earnings per share in 2022?").verified


def test_a_small_number_answering_a_one_figure_question_is_checked() -> None:
    # issue 24's held-back batch: "The churn rate in 2022 was 2 [1]." and "The combined ratio was 1" went unchecked
    report = check("Marlowe's churn rate in 2023 was 2 [3].", "What was Marlowe's churn rate in 2023?",
                   ignore={"marlowe"})
    assert report.refused and [f.text for f in report.figures] == ["2"]
    # a date's day is no figure, and a question asking for no one figure keeps small counts unchecked
    assert check("As of December 31 total revenues were $1.69 billion [1].",
                 "What were total revenues in 2023?").verified
    assert check("Marlowe has 3 segments [3].", "Describe Marlowe's business.").figures == []



def test_a_tables_heading_says_what_its_rows_are_about() -> None:
    # the development mix: "The restructuring liability ... is $81 million" rested on "Balance ... | 81"
    table = Source(9, "(in millions)\nRestructuring liability\nBalance at January 1, 2022 | $ 70\n"
                      "Balance at December 31, 2022 | $ 81")
    question = "What was Marlowe's restructuring liability at the end of 2022?"
    assert verify("The restructuring liability was $81 million [9].", refusal=REFUSAL, excerpts=[table],
                  question=question).verified


def test_a_question_asking_no_one_figure_is_answered_in_the_documents_words() -> None:
    # "the worst topline performance ... Las Vegas Strip Resorts, net revenues up 77%": the line names the
    # sentence's region and revenue, none of the question's words
    table = Source(10, "Las Vegas Strip Resorts net revenues | 77%")
    answer = "The region with the worst topline performance was Las Vegas Strip Resorts, net revenues up 77% [10]."
    question = "Which region had the worst topline performance in 2022?"
    assert verify(answer, refusal=REFUSAL, excerpts=[table], question=question).verified


def test_a_figure_glued_to_its_unit_is_checked_like_any_other() -> None:
    # batch 1's "a minimum size of 100MB for the /var partition", in no excerpt, had passed unread
    from graph.figures import read_figures
    from graph.verify import Source, verify

    assert [f.text for f in read_figures("100MB, a 2.4GHz CPU, 5mg", headers=False)] == ["100", "2.4", "5"]
    assert not read_figures("3M, 5G, 10-K, 2nd, i386, 4K", headers=False)  # names and codes stay words
    question = "What minimum size does the FHS recommend for the /var partition?"
    answer = "The FHS recommends a minimum size of 100MB for the /var partition [2]."
    unread = verify(answer, refusal="REFUSED", question=question,
                    excerpts=[Source(n=2, text="/var contains variable data files, such as spool directories.")])
    assert unread.answer == "REFUSED"
    held = verify(answer, refusal="REFUSED", question=question,
                  excerpts=[Source(n=2, text="The /var partition should be at least 100 MB in size.")])
    assert held.answer == answer


def test_a_sentence_that_refers_back_to_a_dropped_one_goes_with_it() -> None:
    # held-back genre batch 11's h11-oos-10: "... is Unicode 13.0." dropped, "This version is mentioned in [3] and is
    # the latest version ..." was left standing alone, saying of nothing what it said
    report = check("Subscription revenue was $999 million [2]. This figure was the highest of the three years [2].")
    assert report.refused and report.dropped == ["Subscription revenue was $999 million [2].",
                                                 "This figure was the highest of the three years [2]."]
    kept = check("Subscription revenue was $999 million [2]. Total revenues were $1,693.954 million [1].")
    assert kept.answer == "Total revenues were $1,693.954 million [1]."  # another statement stands on its own
    after_kept = check("Subscription revenue was $612 million [2]. This subscription revenue was $540 million a year "
                       "before [2].")
    assert after_kept.verified and not after_kept.dropped


def test_a_line_abbreviating_the_sentence_s_words_names_them() -> None:
    """Issue 39 (batch 12's Vim limit): "Maximum lhs of a mapping 50 characters." is about the left-hand side the
    sentence names; a word that spells no run of the sentence's initials names nothing."""
    limits = Source(1, "Maximum display width 1024 characters\nMaximum lhs of a mapping 50 characters.\n")
    question = "How many characters can the left-hand side of a mapping have at most in Vim?"
    answer = "The left-hand side of a mapping in Vim can have at most 50 characters [1]."
    report = verify(answer, refusal=REFUSAL, excerpts=[limits], question=question)
    assert report.verified and report.answer == answer
    other = Source(1, "Maximum rhs of a mapping 50 characters.\n")
    assert verify(answer, refusal=REFUSAL, excerpts=[other], question=question).refused


def test_a_paragraph_above_a_figure_is_no_heading_of_it() -> None:
    """Issue 39 (batch 8's largest code point): a paragraph above the figure's sentence, saying "the smallest
    possible component", made the line read as the other side of a question asking the largest; a short
    heading above a row still says what the row is of."""
    howto = Source(1, "A character is the smallest possible component of a text. Characters vary depending on the "
                      "language or context you are talking about.\n"
                      "The Unicode standard has tables listing characters and their code points.\n"
                      "To summarize: a Unicode string is a sequence of code points, which are numbers from 0 through "
                      "0x10FFFF (1,114,111 decimal).\n")
    question = "What is the largest Unicode code point written as a decimal number?"
    answer = "The largest Unicode code point written as a decimal number is 1,114,111 [1]."
    assert verify(answer, refusal=REFUSAL, excerpts=[howto], question=question).answer == answer
    table = Source(1, "Smallest orders\nOrders | 1,114,111\n")
    assert verify("The largest orders were 1,114,111 [1].", refusal=REFUSAL, excerpts=[table],
                  question="How large were the largest orders?").refused


def test_a_count_the_excerpt_writes_in_words_supports_its_digits() -> None:
    # held-back genre batch 24: "36 pleasure-bound streams of craving" was struck beside the verse's "thirty six"
    verse = Source(1, "When the thirty six pleasure-bound streams of craving are strong in a\nman, then numerous "
                      "thoughts of passion carry him away.")
    asked = "How many pleasure-bound streams of craving does the chapter on craving speak of?"
    said = "The chapter on craving speaks of 36 pleasure-bound streams of craving [1]."
    assert verify(said, refusal=REFUSAL, excerpts=[verse], question=asked).verified
    assert not verify(said.replace("36", "37"), refusal=REFUSAL, excerpts=[verse], question=asked).verified
    # "one" is a pronoun as often as a count: it is read as none
    from graph.verify import _spelled_figures

    assert [f.number for f in _spelled_figures("Only one of them, of the two, crossed the river.")] == [2]


def test_a_figure_in_words_is_read_with_its_unit_and_a_hyphened_word_says_its_parts() -> None:
    # held-back genre batch 25: "6%" was struck beside the novel's "six per cent."; batch 18: "15 digits" beside
    # "The automatically generated ones are fifteen-digit numbers" (the line said no "digit")
    novel = Source(1, "The Widow Douglas put Huck's money out at six per cent., and Judge Thatcher did the same.")
    asked = "At what interest rate was Huck's money put out?"
    said = "Huck's money was put out at 6% [1]."
    assert verify(said, refusal=REFUSAL, excerpts=[novel], question=asked).verified
    assert not verify(said.replace("6%", "7%"), refusal=REFUSAL, excerpts=[novel], question=asked).verified
    manual = Source(1, "note down the puzzle you're currently playing, or to tell it to\n- Any text at all is a "
                       "valid random seed. The automatically\ngenerated ones are fifteen-digit numbers, but anything "
                       "will do;")
    asked = "How many digits do the random seeds that Simon Tatham's puzzle games generate automatically have?"
    said = "The random seeds that Simon Tatham's puzzle games generate automatically have 15 digits [1]."
    assert verify(said, refusal=REFUSAL, excerpts=[manual], question=asked).verified
    assert not verify(said, refusal=REFUSAL, excerpts=[Source(1, manual.text.replace("fifteen-digit", "fifteen "
                                                                                      "letter"))],
                      question=asked).verified


def test_whole_numbers_below_a_hundred_are_read_in_words() -> None:
    from lexicon import spelled_numbers

    assert [v for v, _, _ in spelled_numbers("thirty six, Thirty-six, twenty-one, twelve, forty, ninety nine")] == [
        36, 36, 21, 12, 40, 99]
    assert spelled_numbers("someone, often, tension") == []
