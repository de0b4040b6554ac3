"""Every LLM call carries the node that makes it, and the fake models answer by that node, never by
the prompt's wording: a reworded prompt still gets its node's reply (graph/nodes/common.py `tagged`,
providers/llm/chain.py NODE_KEY / NODE_HEADER, tests/support/fakes.py, evals/fake_openai.py)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableBinding, RunnableConfig

from evals.fake_openai import KINDS, kind_of
from graph.nodes.common import node, tagged
from providers.llm import NODE_HEADER, NODE_KEY, ChainResult, LLMChain, node_of
from tests.support.fakes import scripted_chain
from tests.support.settings import make_settings

# A prompt worded the way the old text matcher read other kinds: grading's, answering's, HyDE's, condensing's
MISLEADING = ("For EVERY excerpt above. Using only the excerpts above, answer the question. Write a short passage "
              "as a standalone question; a better search query. You screen messages.")


def echo_kind(kind: str, prompt: str) -> str:
    return f"reply for {kind}"


def test_a_reworded_prompt_still_gets_its_nodes_reply() -> None:
    chain, model = scripted_chain(echo_kind)
    for name, kind in KINDS.items():
        result = chain.invoke(MISLEADING, config=tagged(RunnableConfig(), name))
        assert result.text == f"reply for {kind}"
    assert model.kinds() == list(KINDS.values())


def test_a_streamed_answer_is_answered_by_its_node() -> None:
    chain, model = scripted_chain(echo_kind)
    items = list(chain.stream(MISLEADING, config=tagged(RunnableConfig(), "generate")))
    final = items[-1]
    assert isinstance(final, ChainResult) and final.text == "reply for answer"
    assert model.kinds() == ["answer"]


def test_a_call_outside_a_node_is_other_whatever_its_words() -> None:
    chain, model = scripted_chain(echo_kind)
    assert chain.invoke(MISLEADING).text == "reply for other"
    assert kind_of(None) == "other" and kind_of("retrieve") == "other"
    assert model.kinds() == ["other"]


def test_tagged_keeps_the_config_and_its_metadata() -> None:
    config = RunnableConfig(metadata={"owner_id": 7}, tags=["t"], configurable={"k": 1})
    out = tagged(config, "grade")
    assert out["metadata"] == {"owner_id": 7, NODE_KEY: "grade"}
    assert out["tags"] == ["t"] and out["configurable"] == {"k": 1}
    assert config["metadata"] == {"owner_id": 7}  # the caller's config is not changed
    assert node_of(out) == "grade" and node_of(config) is None and node_of(None) is None


def test_a_node_hands_its_function_a_config_naming_it() -> None:
    seen: dict[str, Any] = {}

    @node("hyde")
    def hyde(state: Any, config: RunnableConfig, runtime: Any) -> dict[str, Any]:
        seen["node"] = node_of(config)
        return {}

    hyde({}, RunnableConfig(), None)
    assert seen["node"] == "hyde"


def test_only_the_self_hosted_links_are_told_the_node() -> None:
    """vllm and local (native_json_schema) get the NODE_HEADER header; a cloud link is told nothing."""
    chain = LLMChain(make_settings(vllm_base_url="http://vllm.invalid/v1", vllm_model="m", openrouter_api_key="k",
                                   llm_order="vllm,openrouter"))
    vllm, openrouter = chain.specs
    bound = chain._runnable(vllm, None, node="grade")
    assert isinstance(bound, RunnableBinding) and bound.kwargs["extra_headers"] == {NODE_HEADER: "grade"}
    assert not isinstance(chain._runnable(openrouter, None, node="grade"), RunnableBinding)
    assert not isinstance(chain._runnable(vllm, None, node=None), RunnableBinding)
