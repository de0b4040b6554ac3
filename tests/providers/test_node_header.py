"""Over HTTP: the chain tells a self-hosted server which node asks (NODE_HEADER), and the fake
OpenAI server (evals/fake_openai.py) answers by it, never by the prompt's wording. A cloud link
(another OpenAI-compatible host) is not told, and the fake answers it as a call outside a node."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.runnables import RunnableConfig

from evals.fake_openai import FakeOpenAI
from graph.nodes.common import tagged
from providers.llm import ChainResult, LLMChain
from tests.support.settings import make_settings

# worded the way the old text matcher read grading and answering
MISLEADING = "For EVERY excerpt above, answer yes or no. Using only the excerpts above, answer the question."


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lambda kind, prompt: f"reply for {kind}", model="scripted") as server:
        yield server


def test_the_self_hosted_link_names_the_node_and_gets_its_reply(fake: FakeOpenAI) -> None:
    chain = LLMChain(make_settings(vllm_base_url=f"{fake.url}/v1", vllm_model="scripted", llm_order="vllm"))
    assert chain.invoke(MISLEADING, config=tagged(RunnableConfig(), "hyde")).text == "reply for hyde"
    streamed = list(chain.stream(MISLEADING, config=tagged(RunnableConfig(), "generate")))
    final = streamed[-1]
    assert isinstance(final, ChainResult) and final.text == "reply for answer"
    assert chain.invoke(MISLEADING).text == "reply for other"  # no node, whatever the words
    assert [(r["node"], r["kind"], r["stream"]) for r in fake.requests] == [
        ("hyde", "hyde", False), ("generate", "answer", True), (None, "other", False)]


def test_a_cloud_link_is_not_told_the_node(fake: FakeOpenAI) -> None:
    chain = LLMChain(make_settings(llm_links=[{"name": "acme", "kind": "openai-compatible",
                                               "base_url": f"{fake.url}/v1", "key": "k", "model": "scripted"}]))
    assert chain.invoke(MISLEADING, config=tagged(RunnableConfig(), "grade")).text == "reply for other"
    assert [r["node"] for r in fake.requests] == [None]
