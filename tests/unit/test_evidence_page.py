"""A citation names the page its evidence line is on (graph/citations.py `on_evidence_page`)."""

from __future__ import annotations

from graph.citations import on_evidence_page
from graph.nodes.retrieve import shown_parts
from graph.state import Citation, PagePart
from storage.search import ChildUnit

CHILDREN = [ChildUnit(1, 3, "page 3", None, "Design. Participants are assigned at random to one of two arms."),
            ChildUnit(1, 4, "page 4", [[1.0, 2.0, 3.0, 4.0]], "Sample size. The study will recruit 20 participants.")]


def test_the_parts_shown_are_the_children_whose_lines_the_text_holds() -> None:
    shown = "… Sample size. The study will recruit 20 participants. …"
    assert [p["page"] for p in shown_parts(shown, CHILDREN)] == [4]


def test_a_citation_moves_to_the_page_of_its_evidence_line() -> None:
    parts = [PagePart(page=c.page, page_label=c.page_label, boxes=c.boxes, text=c.text) for c in CHILDREN]
    cited = Citation(n=1, page=3, page_label="page 3", boxes=None, text="…",
                     evidence=[{"text": "Sample size. The study will recruit 20 participants.", "kind": "sentence"}])
    moved = on_evidence_page(cited, parts)
    assert (moved["page"], moved["page_label"], moved["boxes"]) == (4, "page 4", [[1.0, 2.0, 3.0, 4.0]])
    # evidence found on no part, or no evidence: the page the search matched stays
    assert on_evidence_page(Citation(**{**cited, "evidence": [{"text": "elsewhere"}]}), parts)["page"] == 3
    assert on_evidence_page(Citation(**{**cited, "evidence": []}), parts)["page"] == 3


def test_a_sentences_evidence_is_the_statement_whole_across_the_lines_it_wraps() -> None:
    # the evidence under a citation was the one line that shared most words: half a sentence of a wrapped
    # footnote ("donarmstrong.com) 2014-11-15: ”The committee decided ... alternative dependency")
    from graph.grounding import evidence_of
    from graph.verify import VerifyReport

    text = ("and merge reasonable contributions. Bug #746578 (https://lists.debian.org/20141116001628.GO32192@teltox.\n"
            "donarmstrong.com) 2014-11-15: ”The committee decided that systemd-shim should be the first listed "
            "alternative dependency\nof libpam-systemd instead of systemd-sysv.” This decision made it easier.")
    answer = ("The committee decided that systemd-shim should be the first listed alternative dependency of "
              "libpam-systemd instead of systemd-sysv [1].")
    report = VerifyReport(answer=answer, original=answer, verified=True, refused=False, figures=[], dropped=[])
    evidence = evidence_of(answer, report, [Citation(n=1, text=text)], [], {})
    assert evidence == {1: [{"text": "Bug #746578 (https://lists.debian.org/20141116001628.GO32192@teltox. "
                                     "donarmstrong.com) 2014-11-15: ”The committee decided that systemd-shim should "
                                     "be the first listed alternative dependency of libpam-systemd instead of "
                                     "systemd-sysv.”", "box": None, "kind": "sentence"}]}
