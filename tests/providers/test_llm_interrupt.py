"""Issue 41: a stopped run interrupts its model call, streamed or not (providers/llm/interrupt.py).

A call that does not stream (grading, every structured call) got no callback between its start and
its reply, so a client that left kept the model computing until the reply: here the scripted model
takes 30 s over a grading reply, and the call must end within a second or two of the stop (asserted
with a margin a busy machine keeps: within half the 30 s), with the model seeing its client gone (as
llama.cpp's server, which then cancels the generation).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import BaseModel

from answering.stopping import Stopped, StopWatch
from evals.fake_openai import FakeOpenAI
from providers.llm import LLMChain
from tests.support.settings import make_settings

SLOW_S = 30.0  # the model's time over the slow reply: far past what a stop may take


class Grades(BaseModel):
    excerpt_1: str


def script(kind: str, prompt: str) -> str:
    return '{"excerpt_1": "yes"}' if kind == "grade" else "A short answer."


@pytest.fixture
def model() -> Any:
    fake = FakeOpenAI(script)
    yield fake
    fake.close()


def chain_of(model: FakeOpenAI) -> LLMChain:
    return LLMChain(make_settings(vllm_base_url=f"{model.url}/v1", vllm_model="fake-model", llm_order="vllm"))


def stopped_once_asked(model: FakeOpenAI, kind: str) -> tuple[StopWatch, list[float]]:
    """A watch that says stop once the model holds the request (the time it did so in `when`)."""
    when: list[float] = []

    def requested() -> bool:
        if not when and any(r["kind"] == kind for r in model.requests):
            when.append(time.monotonic())
        return bool(when)

    return StopWatch(requested, every_s=0.05), when


def until_left(model: FakeOpenAI, kind: str) -> dict[str, Any]:
    deadline = time.monotonic() + SLOW_S / 2  # well before the reply would have come
    while time.monotonic() < deadline:
        found = [r for r in model.requests if r["kind"] == kind and r["left"]]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"the model never saw its {kind} client leave: {model.requests}")


def test_a_call_that_does_not_stream_stops_with_its_run(model: FakeOpenAI) -> None:
    model.kind_delay_s = {"grade": SLOW_S}
    watch, when = stopped_once_asked(model, "grade")
    with pytest.raises(Stopped):
        chain_of(model).invoke("Grade these.", structured=Grades,
                               config={"callbacks": [watch], "metadata": {"node": "grade"}})
    took = time.monotonic() - when[0]
    assert took < SLOW_S / 2, took  # from the stop, not the reply 30 s later (a margin for a busy machine)
    record = until_left(model, "grade")
    assert not record["completed"]


def test_a_stream_still_reading_its_prompt_stops_with_its_run(model: FakeOpenAI) -> None:
    """No token yet (a long prompt being read): no callback fires either."""
    model.kind_delay_s = {"answer": SLOW_S}
    watch, when = stopped_once_asked(model, "answer")
    with pytest.raises(Stopped):
        list(chain_of(model).stream("Answer this.", config={"callbacks": [watch], "metadata": {"node": "generate"}}))
    assert time.monotonic() - when[0] < SLOW_S / 2  # from the stop, not the reply 30 s later
    until_left(model, "answer")


def test_calls_without_a_stop_run_as_before_one_connection_each(model: FakeOpenAI) -> None:
    chain = chain_of(model)
    watch = StopWatch(lambda: False)
    for _ in range(3):  # no kept connection carries a later call
        result = chain.invoke("Grade these.", structured=Grades,
                              config={"callbacks": [watch], "metadata": {"node": "grade"}})
        assert result.parsed == Grades(excerpt_1="yes")
    pieces = list(chain.stream("Answer this.", config={"metadata": {"node": "generate"}}))
    assert pieces[-1].text == "A short answer."  # type: ignore[union-attr]
    assert [r["completed"] for r in model.requests] == [True] * 4
