"""What the model is shown of a passage: the evidence, wherever in the passage it sits (graph/windows.py)."""

from __future__ import annotations

from graph.windows import GAP, view

FILLER = "The committee met in the spring and reviewed the schedule of the programme. "


def _passage(*inserts: str) -> str:
    parts = []
    for insert in inserts:
        parts.append(FILLER * 15)
        parts.append(insert)
    parts.append(FILLER * 15)
    return "\n".join(parts)


def test_a_passage_within_the_budget_is_shown_whole() -> None:
    assert view("Flight Time 102 hours. Visibility 10 miles.", [], "flight time?", 500) == \
        "Flight Time 102 hours. Visibility 10 miles."


def test_the_answer_far_from_the_matched_child_is_in_view() -> None:
    # the failure: a window centred on the matched child missed the answer lines away
    child = FILLER * 3
    parent = _passage("The study will recruit 20 participants at two sites.")
    shown = view(parent, [child], "How many participants will the study recruit?", 600)
    assert "recruit 20 participants" in shown
    assert len(shown) <= 600 + 2 * len(GAP)


def test_a_form_label_is_shown_with_the_value_on_the_next_line() -> None:
    parent = _passage("Total Flight Time\n102 hours", "Visibility\n10 miles")
    shown = view(parent, [], "What was the pilot's total flight time?", 300)
    assert "Total Flight Time\n102 hours" in shown


def test_every_matched_child_and_the_best_line_share_the_budget() -> None:
    first, second = "Dose A is 1 to 1.5 mg/kg given daily.", "Dose B is 10 mg/kg given once."
    parent = _passage(first, second)
    shown = view(parent, [first, second], "What is the dose of drug A?", 500)
    assert first in shown and second in shown
    assert shown.count(GAP.strip()) >= 2  # separate windows, not one span across the filler


def test_a_passage_with_no_break_is_cut_to_the_budget() -> None:
    assert len(view("x" * 5000, [], "what?", 300)) <= 300 + 2
