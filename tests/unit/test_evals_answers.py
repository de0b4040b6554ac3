"""evals/answers.py's scoring, with fake outcomes and no model: refusals, scale errors, tracing,
the fold view, and the hand-written out-of-scope set's shape."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from evals import answers
from evals.answers import Item
from evals.common import FINANCEBENCH, load_jsonl
from graph import prompts

REFUSALS = (prompts.CANNOT_ANSWER, prompts.REFUSAL)


def outcome(answer: str, cited: list[int] | None = None, texts: dict[int, str] | None = None, **more: object) -> dict:
    texts = texts or {}
    citations = [{"n": n, "name": "ACME_2020_10K.pdf", "page": n, "text": t} for n, t in texts.items()]
    return {"answer": answer, "cited": cited or [], "citations": citations, "blocked": False, **more}


def figure_item(reference: str, question: str = "What was ACME's net income (in USD millions)?",
                base_scale: float | None = None, company: str = "ACME") -> Item:
    from evals import scoring

    scale = scoring.question_scale(question) if base_scale is None else base_scale
    return Item(f"{company}-{reference}", "dev", question, company, "ACME_2020_10K", reference, "figure", scale)


def oos_item(kind: str = "general", company: str | None = None) -> Item:
    return Item("oos-1", "oos", "What is the capital of Peru?", company, None, None, kind, None)


def test_an_out_of_scope_question_counts_as_refused_only_with_no_citation() -> None:
    item = oos_item()
    clean = answers.score(item, outcome(prompts.CANNOT_ANSWER), 1.0, tol=0.02, refusal_texts=REFUSALS)
    cited = answers.score(item, outcome("The documents do not say. [1]", [1], {1: "leases"}), 1.0, tol=0.02)
    answered = answers.score(item, outcome("Lima, as stated in [1].", [1], {1: "leases"}), 1.0, tol=0.02)
    uncited_answer = answers.score(item, outcome("The capital of Peru is Lima."), 1.0, tol=0.02)
    assert (clean["refused"], clean["refused_no_citation"]) == (True, True)
    assert (cited["refused"], cited["refused_no_citation"]) == (True, False)
    assert (answered["refused"], answered["refused_no_citation"]) == (False, False)
    # citing nothing is not refusing: an answer from general knowledge must not pass as a refusal
    assert (uncited_answer["refused"], uncited_answer["refused_no_citation"]) == (False, False)
    m = answers.measure([clean, cited, answered, uncited_answer])
    assert m["oos_refused_no_citation"] == {"value": 0.25, "k": 1, "n": 4}


def test_refusal_phrasings_and_answers_that_only_mention_a_gap() -> None:
    assert answers.is_refusal_text("The provided excerpts don't say what Nike's revenue was.")
    assert answers.is_refusal_text("This information is not found in the documents.")
    assert answers.is_refusal_text("")
    assert not answers.is_refusal_text("Net income was $1,694 million [1]. The filing does not say why.")


def test_an_answerable_question_refused_is_counted_and_incorrect() -> None:
    item = figure_item("$1577.00")
    row = answers.score(item, outcome(prompts.CANNOT_ANSWER), 2.0, tol=0.02, refusal_texts=REFUSALS)
    blocked = answers.score(item, {**outcome("Sorry."), "blocked": True}, 2.0, tol=0.02)
    assert (row["refused"], row["correct"], row["correct_by"]) == (True, False, "refusal")
    assert blocked["refused"]
    assert answers.measure([row, blocked])["answerable_refused"]["k"] == 2


def test_a_figure_a_thousand_times_too_large_is_a_scale_error_not_a_right_answer() -> None:
    # the failure of issue 24: a table "in thousands" read as millions
    item = figure_item("$1,693.95 million", question="What was ACME's net income?")
    wrong = answers.score(item, outcome("Net income was $1,693,954 million [1].", [1], {1: "1,693,954"}), 1.0,
                          tol=0.02)
    right = answers.score(item, outcome("Net income was $1,694 million [1].", [1], {1: "(in thousands) 1,693,954"}),
                          1.0, tol=0.02)
    assert (wrong["scale_error"], wrong["correct"]) == (True, False)
    assert (right["scale_error"], right["correct"]) == (False, True)
    m = answers.measure([wrong, right])
    assert m["unit_scale_errors"] == {"value": 0.5, "k": 1, "n": 2}
    assert m["figure_correct"] == {"value": 0.5, "k": 1, "n": 2}


def test_scale_words_are_taken_at_their_word() -> None:
    billion = figure_item("$1.7 billion", question="How much was ACME's revenue?")
    assert answers.scale_error("Revenue was $1.7 million.", answers.gold_figures(billion), billion.question, 0.02)
    assert not answers.figures_correct("Revenue was $1.7 million.", billion, 0.02)
    assert answers.figures_correct("Revenue was $1,700 million.", billion, 0.02)
    # a bare figure is read in the unit the question asks
    asked = figure_item("$1577.00")
    assert answers.figures_correct("Capital expenditure was 1,577.", asked, 0.02)
    assert answers.scale_error("Capital expenditure was 1,577,000.", answers.gold_figures(asked), asked.question,
                               0.02)


def test_no_scale_error_for_ratios_years_or_unknown_scales() -> None:
    ratio = figure_item("0.54", question="What is ACME's ratio? Round your answer to two decimal places.")
    # an operand in millions is not the ratio at a scale
    assert not answers.scale_error("Operating cash flow of $540 million over $1,000 million gives 0.45.",
                                   answers.gold_figures(ratio), ratio.question, 0.02)
    amount = figure_item("$2.018 million", question="What was ACME's adjusted EBITDA?")
    assert not answers.scale_error("In 2018 it was not reported.", answers.gold_figures(amount), amount.question,
                                   0.02)
    unknown = figure_item("16,055", question="What was ACME's cost of sales in fiscal 2017?", base_scale=None)
    unknown = Item(unknown.id, "synthetic", unknown.question, "ACME", "ACME_2020_10K", "16,055", "figure", None)
    assert answers.figures_correct("Cost of sales was $16,055 million.", unknown, 0.02)
    assert not answers.scale_error("Cost of sales was 16,055,000.", answers.gold_figures(unknown), unknown.question,
                                   0.02)


def test_a_synthetic_row_in_its_page_scale() -> None:
    item = Item("s1", "synthetic", "What was ACME's cost of sales in fiscal 2017?", "ACME", "ACME_2020_10K",
                "16,055", "figure", 1e6)
    assert answers.figures_correct("Cost of sales was $16.1 billion.", item, 0.02)
    assert answers.figures_correct("Cost of sales was 16,055.", item, 0.02)  # copied as printed
    assert answers.scale_error("Cost of sales was $16,055 thousand.", answers.gold_figures(item), item.question, 0.02)
    assert answers.page_scale("CONSOLIDATED STATEMENT OF INCOME (Millions, except per share amounts)") == 1e6
    assert answers.page_scale("(In thousands) ... in millions") is None


def test_the_rounding_the_question_asks() -> None:
    item = figure_item("0.62", question="What is ACME's quick ratio? Round your answer to two decimal places.")
    assert answers.rounding_decimals(item.question) == 2
    assert answers.figures_correct("The quick ratio is 0.62.", item, 0.02)
    assert answers.figures_correct("The quick ratio is 0.6249.", item, 0.02)
    assert not answers.figures_correct("The quick ratio is 0.61.", item, 0.02)  # within 2%, not the rounding
    pct = figure_item("1.9%", question="What is it in percents? Round to one decimal place.")
    assert answers.figures_correct("About 1.9% [1].", pct, 0.02)
    assert answers.figures_correct("A share of 0.0186.", pct, 0.02)
    assert not answers.figures_correct("About 2.0%.", pct, 0.02)


def test_figures_traced_to_cited_excerpts_facts_or_the_question() -> None:
    out = outcome("In 2019 net income was $1,694 million [1] and margin 12.5%.", [1],
                  {1: "(in thousands) Net income 1,693,954", 2: "margin 12.5%"})
    figures, untraced, by = answers.traced_figures(out, "What was ACME's net income in 2019?")
    # 2019 is the question's, $1,694 million is the cited excerpt's in thousands; 12.5% sits on an
    # excerpt the answer does not cite
    assert (figures, untraced, by) == (3, 1, "excerpts")
    with_fact = {**out, "facts": [{"n": 3, "value": "12.5%"}]}
    assert answers.traced_figures(with_fact, "What was ACME's net income in 2019?")[1] == 0


def test_a_figure_copied_from_a_cited_row_is_traced_in_its_tables_scale() -> None:
    # the cited excerpt is another chunk of the row's page: the row the answer rests on is the citation's
    # evidence, with its table's scale (the outcome keeps no facts; its citations' evidence rows say them)
    out = outcome("Merchandise inventories (end of FY2019) was $5,409 million [1].", [1],
                  {1: "Total liabilities and equity 12,901 (in millions) Goodwill 915"})
    assert answers.traced_figures(out, "What were inventories at year end FY2019?")[1] == 1
    out["citations"][0]["evidence"] = [{"kind": "row", "text": "Merchandise inventories 5,409",
                                        "context": "Current assets · February 2, 2019 · $ in millions"}]
    assert answers.traced_figures(out, "What were inventories at year end FY2019?")[1] == 0
    out["citations"][0]["evidence"][0]["text"] = "Merchandise inventories 5,209"
    assert answers.traced_figures(out, "What were inventories at year end FY2019?")[1] == 1


def test_the_checks_own_report_is_not_taken_for_the_answers_figures() -> None:
    # the report says verified (and lists a draft's figure); the answer's figure is in nothing it cites
    out = outcome("Revenue was $5 billion [1].", [1], {1: "nothing"},
                  verification={"figures": [{"figure": "$5 billion", "verified": True},
                                            {"figure": "3%", "verified": False}]})
    assert answers.traced_figures(out, "q") == (1, 1, "excerpts")


def test_evidence_lines_hold_the_gold_figure_or_are_not_measured() -> None:
    item = figure_item("$1577.00")
    plain = answers.score(item, outcome("$1,577 million [1].", [1], {1: "Capex 1,577"}), 1.0, tol=0.02)
    assert plain["evidence_line_holds"] is None
    out = outcome("$1,577 million [1].", [1], {1: "Capex 1,577"})
    out["citations"][0]["evidence_line"] = "Purchases of property, plant and equipment (PP&E) (1,577)"
    assert answers.score(item, out, 1.0, tol=0.02)["evidence_line_holds"] is True
    out["citations"][0]["evidence_line"] = "Proceeds from sale of PP&E 262"
    row = answers.score(item, out, 1.0, tol=0.02)
    assert row["evidence_line_holds"] is False
    assert answers.measure([plain, row])["evidence_line_holds_gold"] == {"value": 0.0, "k": 0, "n": 1}
    assert answers.measure([plain])["evidence_line_holds_gold"]["value"] is None  # reported n/a


def test_an_evidence_row_is_read_in_its_tables_scale() -> None:
    item = figure_item("$382.00")
    out = outcome("Net cash provided by operating activities (FY2020) was $381.603 million [1].", [1],
                  {1: "Net cash provided by operating activities 381,603"})
    out["citations"][0]["evidence"] = [{"text": "Net cash provided by operating activities 381,603",
                                        "context": "Cash flows · FY2020 · in thousands", "kind": "row"}]
    assert answers.score(item, out, 1.0, tol=0.02)["evidence_line_holds"] is True
    out["citations"][0]["evidence"][0]["context"] = "Cash flows · FY2020"  # no scale read: as printed
    assert answers.score(item, out, 1.0, tol=0.02)["evidence_line_holds"] is False


def test_a_calculation_holds_its_evidence_when_every_operands_row_is_shown() -> None:
    item = figure_item("0.68", "What is ACME's FY2020 working capital ratio? Round to two decimal places.")
    rows = ["Total current assets 5,121.3", "Total current liabilities 7,491.5"]
    calculation = {"text": "0.68", "operands": [1, 2], "working": "5,121.3 / 7,491.5 = 0.68 [1]"}
    # as the graph's outcome is: its calculation and citations, no facts
    out = outcome("The FY2020 working capital ratio is 0.68 [1]. Calculation: 5,121.3 / 7,491.5 = 0.68 [1]", [1],
                  {1: " ".join(rows)}, calculation=calculation)
    out["citations"][0]["evidence"] = [{"text": r, "kind": "row"} for r in rows]
    row = answers.score(item, out, 1.0, tol=0.02)
    assert row["evidence_line_holds"] is True and row["evidence_by"] == "working"
    out["citations"][0]["evidence"] = [{"text": rows[0], "kind": "row"}]  # one operand's row not shown
    assert answers.score(item, out, 1.0, tol=0.02)["evidence_line_holds"] is False
    out["citations"][0]["evidence"] = [{"text": r, "kind": "row"} for r in rows]
    wrong = {**calculation, "text": "0.70"}  # the rows shown, but the working gives another figure
    assert answers.score(item, {**out, "calculation": wrong}, 1.0, tol=0.02)["evidence_line_holds"] is False


def test_prose_without_a_judge_is_not_judged() -> None:
    item = Item("p1", "dev", "Is ACME capital-intensive?", "ACME", "ACME_2020_10K", "No, capex is low.", "prose")
    row = answers.score(item, outcome("No, it is not [1].", [1], {1: "capex"}), 1.0, tol=0.02)
    judged = answers.score(item, outcome("No, it is not [1].", [1], {1: "capex"}), 1.0, tol=0.02,
                           judge=lambda q, r, a: True)
    assert (row["correct"], judged["correct"]) == (None, True)
    m = answers.measure([row, judged])["correct_all"]
    assert (m["k"], m["n"], m["not_judged"]) == (1, 1, 1)


def _row(company: str | None, correct: bool, set_name: str = "dev", kind: str = "figure", seconds: float = 1.0,
         refused: bool = False) -> dict:
    return {"id": f"{company}-{correct}-{seconds}", "set": set_name, "company": company, "kind": kind,
            "correct": correct if set_name != "oos" else None, "refused": refused, "cited": not refused,
            "refused_no_citation": refused, "figures": 1, "untraced": 0, "total_s": seconds,
            "scale_known": True, "scale_error": False}


def test_folds_report_each_company_and_the_mean_over_companies_not_over_questions() -> None:
    rows = [_row("A", True), _row("A", True), _row("A", True), _row("A", False),  # A: 0.75 of 4
            _row("B", False), _row("B", True),  # B: 0.5 of 2
            _row("C", True),  # C, declared tuned on
            _row("B", False, "oos", "year_not_covered", refused=True),
            _row(None, False, "oos", "general", refused=False), _row("Nike", False, "oos", "other_company")]
    view = answers.folds(rows, tuned_on={"C"}, companies={"A", "B", "C"})
    per = view["companies"]
    assert set(per) == {"A", "B", "C", answers.NO_COMPANY}
    assert per["A"]["figure_correct"]["value"] == 0.75 and per["B"]["figure_correct"]["value"] == 0.5
    assert per["B"]["oos_refused_no_citation"] == {"value": 1.0, "k": 1, "n": 1}  # B's year question
    assert per[answers.NO_COMPANY]["questions"] == 2  # Peru and Nike: no uploaded company
    assert (per["A"]["held_back"], per["C"]["held_back"]) == (True, False)
    # the held-back mean is over companies A and B (0.625), not pooled over their 6 questions (0.667)
    assert view["held_back_mean"]["figure_correct"] == {"value": 0.625, "folds": 2}
    assert view["tuned_on_mean"]["figure_correct"] == {"value": 1.0, "folds": 1}
    assert view["all"]["figure_correct"] == {"value": 0.714, "k": 5, "n": 7}
    assert view["all"]["oos_refused_no_citation"]["n"] == 3
    md = answers.report("oos", rows, view, "note")
    assert "| A | yes | 4 |" in md and "| C | no | 1 |" in md and "year_not_covered | 1 of 1" in md


def test_latency_percentiles() -> None:
    m = answers.measure([_row("A", True, seconds=s) for s in (1.0, 2.0, 3.0, 4.0, 10.0)])
    assert m["latency_s"] == {"p50": 3.0, "p90": 7.6, "n": 5}


def test_the_out_of_scope_set_mixes_with_the_answerable_ones() -> None:
    mixed = answers.interleave([oos_item()] * 3, [figure_item("$1")])
    assert [i.set for i in mixed] == ["oos", "dev", "oos", "oos"]


# -- the hand-written set -------------------------------------------------------------------------
ROWS = load_jsonl(answers.OUT_OF_SCOPE)


def test_the_out_of_scope_set_has_enough_questions_of_every_kind() -> None:
    assert len(ROWS) >= 64
    assert all(set(r) == {"question", "kind", "company", "why"} for r in ROWS)
    kinds = Counter(r["kind"] for r in ROWS)
    assert set(kinds) == set(answers.OOS_KINDS)
    assert all(kinds[k] >= 16 for k in answers.OOS_KINDS), kinds
    assert all(r["why"].strip() and "\n" not in r["why"] for r in ROWS)
    assert all((r["company"] is None) == (r["kind"] == "general") for r in ROWS)
    assert len(answers.oos_items()) == len(ROWS)


def test_no_out_of_scope_question_is_a_duplicate() -> None:
    norm = [" ".join(r["question"].lower().split()) for r in ROWS]
    assert len(set(norm)) == len(norm)


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs the development split")
def test_out_of_scope_companies_match_the_development_split() -> None:
    dev = load_jsonl(FINANCEBENCH / "questions.jsonl")
    dev_questions = {" ".join(q["question"].lower().split()) for q in dev}
    assert not dev_questions & {" ".join(r["question"].lower().split()) for r in ROWS}
    uploaded = answers.development_companies()
    for r in ROWS:
        if r["kind"] in ("year_not_covered", "figure_not_reported"):
            assert r["company"] in uploaded, r
        elif r["kind"] == "other_company":
            assert r["company"] not in uploaded, r


def test_results_readme_names_the_eval() -> None:
    assert "evals/answers.py" in (Path(answers.__file__).parent / "results" / "README.md").read_text()
