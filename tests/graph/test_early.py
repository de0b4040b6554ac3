"""Checked sentences sent while the model writes (graph/nodes/early.py), through the whole graph over
the real database: what is sent early is checked, never taken back, and the answer begins with it."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from evals.fake_openai import excerpts_in
from graph import prompts
from graph.builder import graph
from graph.nodes.verify import verify_node
from tests.graph.test_paths import script_for
from tests.support.fakes import scripted_chain

REVENUE, STAFF = "412 million", "5,300"


def stream(make_run, owner_id: int, question: str, answer: Any, confirm: Any = None,
           **knobs: Any) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The run's ("draft" | "token", text) events in order, and its final state; `answer(prompt)` writes the draft,
    `confirm(prompt)` the verdict on a value's statement (graph/confirm.py)."""
    base = script_for(grade_rule=lambda text: REVENUE in text or STAFF in text)
    chain, _ = scripted_chain(lambda kind, prompt: answer(prompt) if kind == "answer" else
                              confirm(prompt) if kind == "confirm" and confirm else base(kind, prompt))
    run = make_run(owner_id, chain, hyde=False, **knobs)
    events: list[tuple[str, str]] = []
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream({"question": question}, run["config"], context=run["context"],
                                    stream_mode=["custom", "values"]):
        if mode == "values":
            final = chunk
        elif "draft" in chunk or "token" in chunk:
            events.append(("draft", chunk["draft"]) if "draft" in chunk else ("token", chunk["token"]))
    return events, final


def numbers(prompt: str) -> tuple[int, int]:
    found = excerpts_in(prompt)
    return (next((n for n, _w, text in found if REVENUE in text), 1),
            next((n for n, _w, text in found if STAFF in text), 1))


QUESTION = "What were Aurora Widgets' revenue and staff in fiscal 2023?"


def test_checked_sentences_come_before_the_draft_ends_and_stay(report_owner, make_run) -> None:
    def answer(prompt: str) -> str:
        r, e = numbers(prompt)
        return (f"Aurora Widgets reported total revenue of {REVENUE} dollars in fiscal 2023 [{r}]. "
                f"Aurora Widgets employed {STAFF} people at the end of fiscal 2023 [{e}]. "
                f"Aurora Widgets reported total revenue of {REVENUE} dollars [{r}]. "
                f"Aurora Widgets employed {STAFF} people [{e}].")

    events, final = stream(make_run, report_owner[0], QUESTION, answer)
    last_draft = max(i for i, (kind, _) in enumerate(events) if kind == "draft")
    early = "".join(text for kind, text in events[:last_draft] if kind == "token")
    assert REVENUE in early  # the first sentence went out while the model still wrote
    assert "".join(text for kind, text in events if kind == "token") == final["answer"]
    assert final["answer"].startswith(early) and final["streamed"] == early


def test_a_two_sentence_answers_first_sentence_goes_out_while_the_second_is_written(report_owner, make_run) -> None:
    # it waited for a third sentence to begin, so a short answer came whole at the end
    def answer(prompt: str) -> str:
        r, e = numbers(prompt)
        return (f"Aurora Widgets reported total revenue of {REVENUE} dollars in fiscal 2023 [{r}]. "
                f"Aurora Widgets employed {STAFF} people at the end of fiscal 2023 [{e}].")

    events, final = stream(make_run, report_owner[0], QUESTION, answer)
    first = next(i for i, (kind, _) in enumerate(events) if kind == "token")
    written = "".join(text for kind, text in events[:first] if kind == "draft")
    assert written.endswith("[1]. Aurora "), written  # one word into the second sentence
    drafts_after = [text for kind, text in events[first:] if kind == "draft"]
    assert len(drafts_after) >= 8, drafts_after  # the rest of the second sentence was still to come
    tokens = "".join(text for kind, text in events if kind == "token")
    assert tokens == final["answer"] and REVENUE in final["streamed"] and STAFF not in final["streamed"]
    assert STAFF in final["answer"] and final["answer"].startswith(final["streamed"])


def test_a_pointer_sentence_is_waited_for_and_an_unsupported_one_never_sent(report_owner, make_run) -> None:
    def answer(prompt: str) -> str:
        r, e = numbers(prompt)
        return (f"Aurora Widgets reported total revenue of {REVENUE} dollars in fiscal 2023 [{r}]. "
                f"This is stated in [{e}]. "  # gives its marker to the sentence before: that one waits for it
                f"Aurora Widgets paid its auditors 987 million dollars [{r}]. "  # no excerpt holds it: dropped
                f"Aurora Widgets employed {STAFF} people at the end of fiscal 2023 [{e}]. "
                f"Aurora Widgets employed {STAFF} people [{e}].")

    events, final = stream(make_run, report_owner[0], QUESTION, answer)
    tokens = "".join(text for kind, text in events if kind == "token")
    assert tokens == final["answer"] and "987" not in tokens and "This is stated" not in tokens
    last_draft = max(i for i, (kind, _) in enumerate(events) if kind == "draft")
    early = "".join(text for kind, text in events[:last_draft] if kind == "token")
    assert REVENUE in early and final["answer"].startswith(early)
    # the first sentence went out with the pointer's marker too: it was sent only once the pointer was read
    assert early.split(". ")[0].count("[") == 2, early
    assert any("987" in s for s in final["verification"]["dropped"])


def test_a_value_the_model_does_not_confirm_is_dropped_and_none_is_sent_before_it_is_confirmed(report_owner,
                                                                                                make_run) -> None:
    # held-back genre batches: out-of-scope questions answered with a value the cited excerpt writes of another
    # thing; the model, shown the statement holding the value and the question, is asked whether it answers
    asked: list[str] = []

    def answer(prompt: str) -> str:
        r, e = numbers(prompt)
        return (f"Aurora Widgets reported total revenue of {REVENUE} dollars in fiscal 2023 [{r}]. "
                f"Aurora Widgets employed {STAFF} people at the end of fiscal 2023 [{e}].")

    def confirm(says: str) -> Any:
        def verdict(prompt: str) -> str:
            asked.append(prompt)
            return f"{says.capitalize()}, the passage says so." if says == "yes" else "No."
        return verdict

    events, final = stream(make_run, report_owner[0], QUESTION, answer, confirm("no"), confirm_floor=0.45)
    assert final["answer"] == prompts.CANNOT_ANSWER and final["citations"] == []
    last_draft = max(i for i, (kind, _) in enumerate(events) if kind == "draft")
    assert not [text for kind, text in events[:last_draft] if kind == "token"]  # nothing unconfirmed went out
    assert "".join(text for kind, text in events if kind == "token") == final["answer"]
    assert {c["check"] for c in final["verification"]["claims"]} == {"not_confirmed"}
    assert len(asked) == 2 and REVENUE in asked[0] and STAFF in asked[1] and QUESTION in asked[0]
    assert [c["node"] for c in final["llm_calls"]].count("verify") == 2

    asked.clear()
    events, final = stream(make_run, report_owner[0], QUESTION, answer, confirm("yes"), confirm_floor=0.45)
    assert REVENUE in final["answer"] and STAFF in final["answer"] and len(asked) == 2
    last_draft = max(i for i, (kind, _) in enumerate(events) if kind == "draft")
    assert not [text for kind, text in events[:last_draft] if kind == "token"]  # confirmed at the end only
    assert "".join(text for kind, text in events if kind == "token") == final["answer"]

    asked.clear()  # off (0): no call, and checked sentences go out while the model writes
    events, final = stream(make_run, report_owner[0], QUESTION, answer, confirm("no"), confirm_floor=0.0)
    assert REVENUE in final["answer"] and asked == []


def test_verify_keeps_what_was_sent_when_the_whole_check_would_change_it(report_owner, make_run) -> None:
    # the whole draft's check refuses (here: nothing cited is left) after a checked beginning went out
    sent = "Aurora Widgets reported total revenue of 412 million dollars [1]."
    early = {"answer": sent, "citations": [{"n": 1, "text": "x"}], "cited": [1], "verification": {"answer": sent}}
    state: dict[str, Any] = {"question": QUESTION, "answer": "No language model could answer right now.",
                             "citations": [], "streamed": sent, "early": early}
    run = make_run(report_owner[0], scripted_chain(script_for(grade_rule=lambda _t: True))[0])
    out = verify_node(state, run["config"], Runtime(context=run["context"]))  # type: ignore[arg-type]
    assert out["answer"] == sent and out["cited"] == [1] and out["chat_history"][-1]["content"] == sent


class _Answers:
    """Answer processes whose run sends a checked sentence, then its provider fails and the next goes on."""

    def stream(self, inputs: Any, config: Any, chat: Any = None, **_: Any) -> Any:
        from graph.outcome import Outcome

        sent = "Aurora Widgets reported total revenue of 412 million dollars [1]."
        yield "sources", [{"n": 1, "text": "x"}]
        yield "token", sent
        yield "reset", "vllm"
        yield "token", " It employed 5,300 people [1]."
        yield "done", Outcome.from_state({"answer": sent + " It employed 5,300 people [1].", "cited": [1],
                                          "citations": [{"n": 1, "text": "x"}], "provider": "local"})


def test_a_provider_failing_after_checked_sentences_went_out_takes_nothing_back(db, settings, embedder,
                                                                                  make_user) -> None:
    from types import SimpleNamespace

    from answering import accounting
    from answering.chat import ChatAnswerer

    name, owner_id = make_user("early")
    quiet = settings.model_copy(update={"answer_cache": False})
    answerer = ChatAnswerer(SimpleNamespace(database=db, settings=quiet, embedder=embedder), _Answers())  # type: ignore[arg-type]
    events: list[tuple[str, dict[str, Any]]] = []
    [ticket] = accounting.admit(db, quiet, owner_id=owner_id, source="openai")
    answerer.ask_stateless(owner_id=owner_id, username=name, question=QUESTION, history=[], scope=None,
                           source="openai", emit=lambda kind, data: events.append((kind, data)), ticket=ticket)
    assert "reset" not in [kind for kind, _ in events]  # a client would have cleared, or disowned, checked text
    assert "".join(d["token"] for kind, d in events if kind == "token") == events[-1][1]["answer"]
    assert events[-1][0] == "done"


def test_a_composed_answer_the_figures_check_leaves_without_its_figure_is_refused(report_owner, make_run) -> None:
    # code wrote the answer from a row (no claim check of the model's prose applies), the figures' check
    # dropped the figure it gave of another thing, and what was left named a field and no value
    question = "How many bits of the lookup hash does the index keep per read?"
    excerpt = "numberOfHashBuckets The number of hash buckets in the file. Each entry is 8 bytes long."
    state: dict[str, Any] = {"question": question, "figure_choice": {"fact": "F1"},
                             "answer": "numberOfHashBuckets The number of hash buckets in the file. () was 64 [1].",
                             "citations": [{"n": 1, "text": excerpt, "document_id": report_owner[1]}]}
    run = make_run(report_owner[0], scripted_chain(script_for(grade_rule=lambda _t: True))[0])
    out = verify_node(state, run["config"], Runtime(context=run["context"]))  # type: ignore[arg-type]
    assert out["answer"] == prompts.CANNOT_ANSWER and out["cited"] == [] and out["citations"] == [], out["answer"]
