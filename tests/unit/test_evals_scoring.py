"""The model-free scores: figures with units and tolerances, refusals, citation precision, grounding."""

from __future__ import annotations

import json

import pytest

from evals import scoring
from evals.ragas_adapter import schema_in_prompt, schema_model
from graph import prompts

CAPEX_Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"


@pytest.mark.parametrize(("expected", "answer", "question", "ok"), [
    ("$1577.00", "Capital expenditure was $1,577 million [1].", CAPEX_Q, True),
    ("$1577.00", "Purchases of PP&E were (1,577) [2].", CAPEX_Q, True),  # accounting negative
    ("$1577.00", "$1.577 billion", CAPEX_Q, True),  # scale words against the question's unit
    ("$1577.00", "$1.6 billion", CAPEX_Q, True),  # 1.5% off: rounding within 2%
    ("$1577.00", "$1.5 billion", CAPEX_Q, False),  # 4.9% off
    ("$1577.00", "$1,373 million", CAPEX_Q, False),  # the previous year's figure
    ("1.9%", "It grew 1.9 percent.", "", True),
    ("30.8%", "The ratio is 0.308.", "", True),  # a percent matches its fraction
    ("-3.7", "It fell by 3.7%.", "", True),  # sign said in words
    ("24.26", "24.3 times", "", True),
    ("24.26", "about 25", "", False),
    ("$8.70", "Diluted EPS was $8.70 [1][2].", "", True),  # citation markers are not figures
    ("$2,018mn", "Adjusted EBITDA was $2.02 billion.", "", True),
])
def test_numeric_match(expected: str, answer: str, question: str, ok: bool) -> None:
    assert scoring.numeric_match(expected, answer, question=question) is ok


def test_tolerance_is_relative_and_adjustable() -> None:
    assert scoring.numeric_match("100", "101.5", rel_tol=0.02) is True
    assert scoring.numeric_match("100", "101.5", rel_tol=0.01) is False
    assert scoring.numeric_match("No figures here", "42") is None


def test_numeric_reference_or_prose() -> None:
    for ref in ("$1577.00", "1.9%", "-3.7", "24.26 times", "$11588.00"):
        assert scoring.is_numeric_answer(ref), ref
    for ref in ("The consumer segment shrunk by 0.9% organically.", "Amcor is a global leader in packaging.",
                "AMCOR's Adj. EBITDA was $2,018mn in FY 2023"):
        assert not scoring.is_numeric_answer(ref), ref


def test_refusal() -> None:
    texts = (prompts.CANNOT_ANSWER, prompts.REFUSAL)
    assert scoring.is_refusal(prompts.CANNOT_ANSWER, [], texts)
    assert scoring.is_refusal(prompts.REFUSAL, [1], texts)
    assert scoring.is_refusal("Revenue was $5 million.", [], texts)  # cites nothing
    assert scoring.is_refusal("", [1], texts)
    assert not scoring.is_refusal("Revenue was $5 million [1].", [1], texts)


def _out(cited: list[int], pages: list[tuple[str, int]]) -> dict:
    return {"answer": "x", "cited": cited,
            "citations": [{"n": i, "name": name, "page": page, "document_id": "d", "url": None, "text": ""}
                          for i, (name, page) in enumerate(pages, 1)]}


def test_citation_precision() -> None:
    question = {"doc_name": "3M_2018_10K",
                "evidence": [{"doc_name": "3M_2018_10K", "evidence_page_num": 59, "evidence_text": ""}]}
    # evidence_page_num 59 is 0-based: page 60 holds it
    assert scoring.citation_precision(_out([1], [("3M_2018_10K.pdf", 60)]), question) == 1.0
    assert scoring.citation_precision(_out([1], [("3M_2018_10K.pdf", 59)]), question) == 0.0
    # only the citations the answer uses count; shown but uncited excerpts do not
    out = _out([1, 3], [("3M_2018_10K.pdf", 60), ("3M_2018_10K.pdf", 60), ("3M_2018_10K.pdf", 12)])
    assert scoring.citation_precision(out, question) == 0.5
    assert scoring.citation_precision(_out([2], [("other.pdf", 60), ("3M_2018_10K.pdf", 60)]), question) == 1.0
    assert scoring.citation_precision(_out([], [("3M_2018_10K.pdf", 60)]), question) is None


def test_numbers_grounded() -> None:
    contexts = ["Purchases of property, plant and equipment (1,577) (1,373)"]
    assert scoring.numbers_grounded("Capex was $1,577 million [1].", contexts) == 1.0
    assert scoring.numbers_grounded("Capex was $1,577 million and $2,000 million.", contexts) == 0.5
    assert scoring.numbers_grounded("No figures.", contexts) is None


def test_verdict_schema_is_strict() -> None:
    assert scoring.Verdict.model_validate({"reason": "same figure", "correct": "yes"}).correct == "yes"
    with pytest.raises(ValueError):
        scoring.Verdict.model_validate({"reason": "r", "correct": "maybe"})


def test_ragas_schema_read_back_from_prompt() -> None:
    prompt = ('Do it.\nPlease return the output in a JSON format that complies with the following schema as '
              'specified in JSON Schema:\n{"properties": {"verdict": {"type": "integer"}}, "required": ["verdict"], '
              '"title": "Verification", "type": "object"}Do not use single quotes in your response')
    schema = schema_in_prompt(prompt)
    assert schema is not None and schema["title"] == "Verification"
    model = schema_model(schema)
    assert model.__name__ == "Verification" and model.model_json_schema() == schema
    assert model.model_validate({"verdict": 1}).model_dump() == {"verdict": 1}
    assert schema_in_prompt("no schema here") is None


def test_a_quoted_grade_counts_only_words_really_in_the_excerpt() -> None:
    from evals.bench_grading import quote_holds

    excerpt = ("Cash Flows from Investing Activities\n"
               "Purchases of property, plant and equipment (PP&E) | (1,577) | (1,373)")
    assert quote_holds({"quote": "Purchases of property, plant and equipment (PP&E) | (1,577)"}, excerpt)
    assert quote_holds({"quote": "purchases of property plant and equipment PP&E (1,577)"}, excerpt)  # separators
    assert not quote_holds({"quote": "Capital expenditures were $1,577 million"}, excerpt)  # not its words
    assert not quote_holds({"quote": "none"}, excerpt)
    assert not quote_holds({"quote": "PP"}, excerpt)  # too short to show anything


def test_rank_metrics_are_written_once_and_read_alike() -> None:
    """hit@k and MRR over first-right-result ranks (None: a miss), as evals/retrieval.py, cv.py and
    scope_from_question.py all report them now."""
    from evals import cv, retrieval, scope_from_question

    ranks = [1, 3, None, 6, 2, None, 11]
    assert scoring.hit_at(ranks, 1) == 1 / 7 and scoring.hit_at(ranks, 5) == 3 / 7
    assert scoring.hit_at(ranks, 10, digits=3) == round(4 / 7, 3)
    assert scoring.mrr(ranks) == (1 + 1 / 3 + 1 / 6 + 1 / 2 + 1 / 11) / 7
    assert scoring.hit_at([], 5) == 0.0 and scoring.mrr([]) == 0.0
    assert scoring.rank_scores(iter(ranks), (1, 5)) == {"hit@1": 1 / 7, "hit@5": 3 / 7, "mrr": scoring.mrr(ranks)}
    # the eval scripts' summaries are these, unrounded (cv) or to three places (retrieval, scope)
    assert cv.scores(ranks) == scoring.rank_scores(ranks, cv.CUTS)
    assert retrieval.summarise(ranks) == {**{f"hit@{k}": round(scoring.hit_at(ranks, k), 3) for k in retrieval.CUTOFFS},
                                          "mrr": round(scoring.mrr(ranks), 3)}
    assert scope_from_question.hit(ranks, 5) == 0.429


def test_latency_percentiles_are_written_once() -> None:
    """The linear percentile (answers.py, genre.py through it, bench_graph.py) is numpy's default to two
    places; the nearest-rank p95 (bench_embed, bench_queue, bench_search) is a sample."""
    import numpy as np

    from evals import answers

    values = [0.7, 3.2, 1.1, 9.8, 2.5, 4.4, 0.3]
    for q in (0, 5, 50, 90, 95, 100):
        assert scoring.percentile(values, q) == round(float(np.percentile(values, q)), 2)
    assert scoring.percentile([], 50) is None and scoring.percentile([2.0], 90) == 2.0
    assert answers.percentile is scoring.percentile
    assert scoring.nearest_rank(values, 0.95) == 9.8 and scoring.nearest_rank(values, 0.5) == 2.5
    assert scoring.nearest_rank([5.0], 0.95) == 5.0


def test_shares_are_written_once() -> None:
    """k of n to three places, None over none: the two shapes the result files hold are one rule."""
    from evals import facts_lookup, genre, relevance_floor

    assert scoring.fraction(2, 3) == 0.667 and scoring.fraction(2, 3, digits=None) == 2 / 3
    assert scoring.fraction(0, 0) is None and scoring.fraction(True + True, 4) == 0.5
    assert scoring.share(1, 8) == {"k": 1, "n": 8, "share": 0.125}
    assert list(scoring.share_value(1, 8)) == ["value", "k", "n"]  # answers.py's key order, kept
    assert scoring.share_value(0, 0) == {"value": None, "k": 0, "n": 0}
    assert facts_lookup.share is scoring.share and relevance_floor.share is scoring.share
    rows = [{"right": True}, {"right": False}, {}]
    assert genre._share(rows, "right") == scoring.share_value(1, 3)


def test_the_first_right_rank_is_written_once() -> None:
    """evals/retrieval.py, cv.py, scope_from_question.py and testset.py rank a question's hits alike."""
    from types import SimpleNamespace as Hit

    hits = [Hit(document_name="B.pdf", page=4), Hit(document_name="A.pdf", page=9), Hit(document_name="A.pdf", page=4)]
    assert scoring.first_hit_rank(hits, "A", {4}) == 3 and scoring.first_hit_rank(hits, "A", {5}) is None
    assert scoring.filing_rank(hits, "A") == 2 and scoring.filing_rank(hits, "C") is None
    assert scoring.first_rank(iter(hits), lambda h: h.page == 4) == 1 and scoring.first_rank([], bool) is None


def test_the_percentile_methods_the_scripts_had_are_the_shared_one() -> None:
    """burst.py's percentile was statistics.quantiles' inclusive method to one place (the linear one;
    tests/evals/test_burst_pct.py checks burst.pct itself, as burst imports PyMuPDF), retrieval.py's
    p95 its exclusive method: both read the same through scoring.percentile."""
    import random
    import statistics

    draw = random.Random(42)
    for n in (2, 3, 7, 20, 101):
        values = [round(draw.uniform(1, 400), 3) for _ in range(n)]
        for q in (5, 50, 95, 99):
            assert scoring.percentile(values, q, digits=1) == round(
                statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)
        assert scoring.percentile(values, 95, digits=1, method="exclusive") == round(
            statistics.quantiles(values, n=20)[18], 1)


def test_refusals_open_alike() -> None:
    """quality.py's refusal (no citation counts) and the answers harness's (the words only) share the
    rule for the graph's refusal texts; genre.py and claims_ablation.py read the same function."""
    from evals import answers, claims_ablation, genre

    texts = (prompts.CANNOT_ANSWER, prompts.REFUSAL)
    assert scoring.is_refusal_text(prompts.CANNOT_ANSWER + " More words.", texts)
    assert scoring.is_refusal(prompts.CANNOT_ANSWER, [1], texts)
    assert not scoring.is_refusal_text("Revenue was $5 million.", texts)
    assert scoring.is_refusal("Revenue was $5 million.", [], texts)  # only the first counts citations
    assert answers.is_refusal_text is scoring.is_refusal_text is genre.is_refusal_text
    assert claims_ablation.is_refusal_text is scoring.is_refusal_text


def test_a_run_resumes_from_its_rows_file(tmp_path) -> None:
    """ablations, answers, bench_graph, genre and quality keep their rows so: a resumed run finds what a
    cut-short one finished; a new run starts from an empty file."""
    from datetime import date

    from evals.common import append_row, resumable_rows

    rows = tmp_path / "rows.jsonl"
    assert resumable_rows(rows, resume=True) == []  # nothing to resume
    assert resumable_rows(rows, resume=False) == [] and rows.read_text() == ""
    append_row(rows, {"id": 1})
    append_row(rows, {"id": 2, "day": date(2026, 12, 4)})  # what JSON cannot hold is written as text
    assert resumable_rows(rows, resume=True) == [{"id": 1}, {"id": 2, "day": "2026-12-04"}]
    assert resumable_rows(rows, resume=False) == [] and rows.read_text() == ""


def test_evidence_pages_are_read_once() -> None:
    """FinanceBench's 0-based evidence pages as 1-based (filing, page) pairs in scoring.py; retrieval.py's
    pages of the question's own filing (cv, ablations, bench_ocr) are those pairs' pages."""
    from evals import retrieval

    q = {"doc_name": "3M_2018_10K", "evidence": [{"doc_name": "3M_2018_10K", "evidence_page_num": 59},
                                                 {"doc_name": "3M_2018_10K", "evidence_page_num": 60},
                                                 {"doc_name": "3M_2017_10K", "evidence_page_num": 4}]}
    assert scoring.evidence_pages(q) == {("3M_2018_10K", 60), ("3M_2018_10K", 61), ("3M_2017_10K", 5)}
    assert retrieval.evidence_pages(q) == {60, 61}


def test_the_genre_scorer_reads_a_date_as_precisely_as_its_accept_asks() -> None:
    from evals.genre import right

    year, month = {"kind": "date", "accept": ["2012"]}, {"kind": "date", "accept": ["1991-09"]}
    day = {"kind": "date", "accept": ["2021-11-03"]}
    assert right(year, "He gave it at PyCon in 2012 [1].") and not right(year, "At PyCon in 2013 [1].")
    assert right(month, "It was released in September 1991 [1].") and right(month, "Sept. 1991 [1].")
    assert not right(month, "It was released in October 1991 [1].")
    # a whole date asked: the year alone, or another day, is not it
    assert right(day, "On November 3, 2021 [1].") and not right(day, "In November 2021 [1].")
    # a year before 1800 is a year (held-back genre batch 10's "1583" for Scaliger's day count was scored wrong)
    assert right({"kind": "date", "accept": ["1583"]}, "Scaliger introduced it in 1583 [1].")
    assert not right({"kind": "date", "accept": ["1583"]}, "Scaliger introduced it in 1582 [1].")
    # day-first dates with points and year-first ones with a month's name are dates (batches 10 and 12)
    assert right({"kind": "date", "accept": ["2015-02-15"]}, "The guide is dated 15.02.2015 [1].")
    assert not right({"kind": "date", "accept": ["2015-02-15"]}, "It covers Grace-5.1.25 [1].")
    assert right({"kind": "date", "accept": ["2022-04-03"]}, "It was last changed on 2022 Apr 03 [1].")
    assert right({"kind": "date", "accept": ["2015-05"]}, "Rust 1.0 was released in May of 2015 [1].")  # batch 14


def test_the_genre_scorer_reads_a_figure_written_more_precisely_than_its_accept() -> None:
    # batch 12's h12-figure-01: "R reports a grand mean of 291.5938 [1]" for an accept of "291.59" was scored wrong
    from evals.genre import right

    mean = {"kind": "figure", "accept": ["291.59"]}
    assert right(mean, "R reports a grand mean of 291.5938 [1].") and right(mean, "It is 291.59 [1].")
    assert not right(mean, "It is 291.6 [1].") and not right(mean, "It is 1291.59 [1].")
    assert not right(mean, "It is 291.5 [1].")


def test_the_genre_scorer_reads_a_qualified_name() -> None:
    # batch 13's h13-name-04: "... is [1] time.CLOCK_BOOTTIME." for an accept of "CLOCK_BOOTTIME" was scored wrong
    from evals.genre import right

    clock = {"kind": "name", "accept": ["CLOCK_BOOTTIME"]}
    assert right(clock, "The constant is time.CLOCK_BOOTTIME [1].") and right(clock, "CLOCK_BOOTTIME [1].")
    assert not right(clock, "It is CLOCK_BOOTTIME_RAW [1].") and not right(clock, "It is XCLOCK_BOOTTIME [1].")
    assert not right({"kind": "figure", "accept": ["91.59"]}, "It is 291.59 [1].")


def test_the_relevance_floor_study_keeps_what_the_grader_keeps_and_leaves_unmeasured_batches_out() -> None:
    """graph/nodes/grade.py keeps an excerpt below the floor whose statement holds the question, so the study
    does; a held-back batch later than --through is not chosen on."""
    from evals import relevance_floor

    row = {"similarities": [0.3, 0.25], "held": False}
    assert not relevance_floor.keeps(row, 0.36) and relevance_floor.keeps(row, 0.3)
    assert relevance_floor.keeps({**row, "held": True}, 0.36)
    asked = relevance_floor.genre_questions(through=1)
    assert {a.set for a in asked} == {"genre", "oos"}
    first = {json.loads(line)["question"] for line in (relevance_floor.GENRE_DATA / "genre_holdout_1.jsonl").open()}
    second = {json.loads(line)["question"] for line in (relevance_floor.GENRE_DATA / "genre_holdout_2.jsonl").open()}
    questions = {a.question for a in asked}
    assert first <= questions and not second & questions
