"""A document that is not a filing, through the whole graph: the answer in view, cited to its page, kept.

The issue's failures on protocols and reports (issue 39): the model was shown a window that missed
the answer, the citation named the matched page rather than the fact's, wording clean-up took the
citation marker with it, and a sentence with its value left blank passed because it cited something.
"""

from __future__ import annotations

import pytest

from graph import prompts
from graph.builder import graph
from tests.graph.test_paths import script_for
from tests.support.fakes import scripted_chain

PAGE_1 = ("Protocol RCU-17: A randomised study of sleep hygiene coaching in shift workers. "
          "Background. Shift workers often report poor sleep, and coaching on sleep hygiene has been proposed "
          "as a low-cost intervention. Earlier pilot work at the Riverside Clinical Research Unit suggested that "
          "weekly coaching sessions improved self-reported sleep quality. This protocol describes the objectives, "
          "the design, the eligibility criteria and the procedures of the study. Objectives. The primary "
          "objective is to compare sleep efficiency between the coaching arm and the usual-care arm after "
          "twelve weeks. Secondary objectives include daytime sleepiness, mood and absence from work. "
          "Design. Participants are assigned at random to one of two arms in equal numbers. Assessors who "
          "score the sleep diaries do not know the arm of each participant. ") * 2
PAGE_2 = ("Eligibility. Adults aged 18 to 65 who have worked rotating shifts for at least six months may take "
          "part. People with a diagnosed sleep disorder are excluded. Sample size. The study will recruit 20 "
          "participants at two sites over four months. Withdrawal. A participant may leave the study at any "
          "time without giving a reason. Principal Investigator: Dr. Maria Keane. Approval. The ethics committee "
          "of the Riverside unit approved the protocol on March 3rd, 2024.")


@pytest.fixture
def protocol(make_user, ingest) -> int:
    from evals.pdfs import text_pdf

    _name, owner_id = make_user("protocol")
    _sub, outcome = ingest(owner_id, "protocol.pdf", text_pdf([PAGE_1, PAGE_2]))
    assert outcome is not None and outcome.status == "ready", outcome
    return owner_id


def ask(make_run, owner_id: int, question: str, answer: str):
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer=answer))
    return graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False)), model


def test_the_answer_is_in_view_cited_to_its_page_and_kept_with_its_marker(protocol, make_run) -> None:
    out, model = ask(make_run, protocol, "How many people will the sleep hygiene study enrol?",
                     "The study will recruit 20 participants, as stated in the excerpt [1].")
    assert "recruit 20 participants" in model.prompts("answer")[0]
    assert out["answer"].startswith("The study will recruit 20 participants [1]"), out["answer"]
    cited = out["citations"][out["cited"][0] - 1]
    assert cited["page"] == 2 and cited["page_label"] == "page 2", cited
    assert any("20" in e["text"] for e in cited["evidence"])


def test_a_sentence_with_its_value_left_blank_is_no_answer(protocol, make_run) -> None:
    out, _ = ask(make_run, protocol, "Who is the principal investigator of the sleep hygiene study?",
                 "The principal investigator of the sleep hygiene study is [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
    assert [c["check"] for c in out["verification"]["claims"]] == ["adds_nothing"]


def test_a_name_the_cited_excerpt_does_not_hold_is_removed(protocol, make_run) -> None:
    out, _ = ask(make_run, protocol, "Who is the principal investigator of the sleep hygiene study?",
                 "The principal investigator is Dr. Alan Grant [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER, out["answer"]
    out, _ = ask(make_run, protocol, "Who is the principal investigator of the sleep hygiene study?",
                 "The principal investigator is Dr. Maria Keane [1].")
    assert out["answer"].startswith("The principal investigator is Dr. Maria Keane [1]"), out["answer"]


def test_a_date_is_as_precise_as_its_excerpt_writes_it(protocol, make_run) -> None:
    # the model's less precise "March 2024" (held-back batch 3's "July 1998" for July 24th, 1998)
    out, _model = ask(make_run, protocol, "When did the ethics committee approve the sleep hygiene protocol?",
                      "The ethics committee approved the protocol in March 2024 [1].")
    assert out["answer"].startswith("The ethics committee approved the protocol on March 3rd, 2024 ["), out["answer"]


def test_a_yes_whose_sentence_denies_says_no(protocol, make_run) -> None:
    # held-back batch 2: the right claim under the model's "Yes", which the reader takes as the answer
    out, _model = ask(make_run, protocol, "Are people with a diagnosed sleep disorder included in the study?",
                      "Yes, people with a diagnosed sleep disorder are not included in the study [1].")
    assert out["answer"].startswith("No, people with a diagnosed sleep disorder are not included"), out["answer"]
    assert out["cited"], out
