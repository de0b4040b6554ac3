"""What a caller sees of an answer: markers are clean (issue 13; the streamed numbering and the
refusal, through the graph: tests/graph/test_answer_contract.py)."""

from __future__ import annotations

from graph.citations import clean_markers


def test_a_marker_is_not_repeated_after_its_sentence() -> None:
    assert clean_markers("Revenue was 412 million dollars [1]. [1]", 3) == ("Revenue was 412 million dollars [1].",
                                                                            [1])
    assert clean_markers("Revenue was 412 million [1] [1].", 3)[0] == "Revenue was 412 million [1]."
    # different markers, or a marker starting the next sentence, stay
    assert clean_markers("A is 412 million [1]. [2] B is 5,300.", 3)[0] == "A is 412 million [1]. [2] B is 5,300."
    assert clean_markers("A is 412 million [1]. B is 5,300 [1].", 3)[0] == "A is 412 million [1]. B is 5,300 [1]."
