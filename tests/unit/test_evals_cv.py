"""The cross-validation protocol (evals/cv.py): a choice is scored on companies it was not chosen on."""

from __future__ import annotations

from evals.cv import SCOPES, Point, Question, cross_validate, scores

GOOD_FOR_A = Point(2.0, 1.0, 1.0, 60, 50, "shipped")
GOOD_FOR_B = Point(0.5, 1.0, 1.0, 60, 50, "shipped")


def questions(company: str, n: int) -> list[Question]:
    return [Question(f"{company}{i}", company, f"{company}_10K", "q?", frozenset({1})) for i in range(n)]


def test_a_point_that_only_suits_the_left_out_company_is_never_credited_to_it() -> None:
    # company A's questions are found only by GOOD_FOR_A, B's and C's only by GOOD_FOR_B
    qs = questions("A", 2) + questions("B", 3) + questions("C", 3)
    ranks = {}
    for q in qs:
        for scope in SCOPES:
            ranks[GOOD_FOR_A, scope, q.id] = 1 if q.company == "A" else None
            ranks[GOOD_FOR_B, scope, q.id] = None if q.company == "A" else 1
    cv = cross_validate(ranks, [GOOD_FOR_A, GOOD_FOR_B], {"set": qs}, prefer=GOOD_FOR_A)
    # in-sample the best point finds 6 of 8; held back, A is scored with the point B and C chose
    assert cv["set"]["held_back"]["within_document"]["hit@5"] == 6 / 8
    assert [f["chosen"] for f in cv["folds"]] == [GOOD_FOR_B.label] * 3
    # tuned-on: what the chosen point found among the questions it was chosen on, fold by fold
    assert abs(cv["set"]["tuned_on"]["within_document"]["hit@1"] - (6 / 6 + 3 / 5 + 3 / 5) / 3) < 1e-9


def test_scores() -> None:
    s = scores([1, 3, None, 6])
    assert (s["hit@1"], s["hit@3"], s["hit@5"]) == (0.25, 0.5, 0.5)
    assert abs(s["mrr"] - (1 + 1 / 3 + 1 / 6) / 4) < 1e-9
