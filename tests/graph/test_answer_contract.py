"""What a caller sees of an answer: streamed numbers match the final ones, markers are clean, a
refusal cites nothing (issue 13's three bugs, each failing before its fix)."""

from __future__ import annotations

from evals.fake_openai import excerpts_in, grades_json
from graph import prompts
from graph.stream import run_graph
from tests.support.fakes import scripted_chain

REVENUE = "412 million"
QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def _events(run: dict) -> tuple[list, object]:
    events = list(run_graph({"question": QUESTION}, run["config"], run["context"].running))
    assert events[-1][0] == "done"
    return events[:-1], events[-1][1]


def test_streamed_sources_are_the_final_numbering_when_grading_rejects_one(report_owner, make_run) -> None:
    owner_id, _ = report_owner

    def script(kind: str, prompt: str) -> str:
        if kind == "grade":  # reject the first excerpt only: shown (3) and relevant (2) differ
            return grades_json(prompt, lambda text: not text.strip().startswith(excerpts_in(prompt)[0][2].strip()))
        if kind == "answer":
            n = next(n for n, _where, text in excerpts_in(prompt) if REVENUE in text)
            return f"Revenue was {REVENUE} dollars [{n}]."
        return "x"

    chain, _ = scripted_chain(script)
    events, outcome = _events(make_run(owner_id, chain, retrieve_k=3, top_k=3, hyde=False))
    sources = [data for kind, data in events if kind == "sources"]
    assert len(sources) == 1, events
    assert events.index(("sources", sources[0])) < next(i for i, (k, _) in enumerate(events) if k == "token")
    assert outcome.status == "ok" and outcome.cited
    assert sources[0] == outcome.citations  # the same entries under the same numbers, not just the numbers
    cited = sources[0][outcome.cited[0] - 1]
    assert REVENUE in cited["text"]


def test_a_refusal_cites_nothing(report_owner, make_run) -> None:
    owner_id, _ = report_owner
    chain, _ = scripted_chain(lambda kind, prompt: grades_json(prompt, lambda t: True) if kind == "grade"
                              else prompts.CANNOT_ANSWER if kind == "answer" else "x")
    events, outcome = _events(make_run(owner_id, chain, retrieve_k=3, top_k=3, hyde=False))
    assert outcome.answer == prompts.CANNOT_ANSWER
    assert outcome.citations == [] and outcome.cited == []
    # an answer whose figures are all invented is withheld the same way
    chain, _ = scripted_chain(lambda kind, prompt: grades_json(prompt, lambda t: True) if kind == "grade"
                              else "Revenue was 987,654 dollars [1]." if kind == "answer" else "x")
    _events_, outcome = _events(make_run(owner_id, chain, retrieve_k=3, top_k=3, hyde=False))
    assert outcome.answer == prompts.CANNOT_ANSWER and outcome.citations == []
