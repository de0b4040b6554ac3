"""The executor cut-off and failure descriptions, without any provider."""

from __future__ import annotations

import threading
import time

import pytest
from langchain_core.messages import AIMessage

from providers.llm.cutoff import run_with_cutoff, stream_with_cutoff
from providers.llm.errors import LinkTimeout, describe, refusal_reason, status_code


def test_run_with_cutoff_returns_and_propagates() -> None:
    assert run_with_cutoff(lambda: 42, 1.0) == 42
    with pytest.raises(ZeroDivisionError):
        run_with_cutoff(lambda: 1 / 0, 1.0)


def test_run_with_cutoff_abandons_a_hung_call_on_time() -> None:
    gate = threading.Event()
    started = time.monotonic()
    with pytest.raises(LinkTimeout, match="within 0.3s"):
        run_with_cutoff(lambda: gate.wait(10), 0.3)
    assert time.monotonic() - started < 5.0  # the cut-off and a busy machine's margin, not the hung call's 10 s
    gate.set()


def test_stream_with_cutoff_first_and_next_item() -> None:
    gate = threading.Event()

    def slow_after_two():
        yield "a"
        yield "b"
        gate.wait(10)
        yield "c"

    got = []
    with pytest.raises(LinkTimeout, match="no next token"):
        for item in stream_with_cutoff(slow_after_two, 0.3):
            got.append(item)
    assert got == ["a", "b"]
    gate.set()

    def late():
        time.sleep(1)
        yield "x"

    with pytest.raises(LinkTimeout, match="no first token"):
        list(stream_with_cutoff(late, 0.2))
    assert list(stream_with_cutoff(lambda: iter(["x", "y"]), 0.5)) == ["x", "y"]


def test_status_code_from_each_sdk_style() -> None:
    class WithStatus(Exception):
        status_code = 429

    class Response:
        status_code = 503

    class WithResponse(Exception):
        response = Response()

    assert status_code(WithStatus()) == 429
    assert status_code(WithResponse()) == 503
    assert status_code(Exception("[401] Unauthorized")) == 401  # langchain-nvidia-ai-endpoints
    wrapped = RuntimeError("wrapper")
    wrapped.__cause__ = WithStatus()
    assert status_code(wrapped) == 429
    assert status_code(ValueError("nothing")) is None
    assert describe(WithStatus("slow down")).startswith("http 429: WithStatus: slow down")
    assert describe(ConnectionError("Connection refused")).startswith("connection error")


def test_refusal_reasons() -> None:
    assert refusal_reason(AIMessage(content="ok", response_metadata={"finish_reason": "stop"})) is None
    assert refusal_reason(AIMessage(content="", additional_kwargs={"refusal": "no"})) == "refusal: no"
    assert refusal_reason(AIMessage(content="x", response_metadata={"finish_reason": "SAFETY"})) == \
        "refusal: finish_reason=safety"
    blocked = AIMessage(content="", response_metadata={"prompt_feedback": {"block_reason": "OTHER"}})
    assert refusal_reason(blocked) == "refusal: prompt blocked (OTHER)"
