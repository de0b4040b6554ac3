"""The fallback chain over real HTTP against local servers that speak each provider's protocol."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from providers.llm import AllLinksFailed, ChainResult, LLMChain, StreamReset
from runtime import build_runtime
from tests.support.settings import make_settings

CUT = 2.0  # short executor cut-off for tests (slack for a loaded CI machine)


def every_link(openai_like: str, gemini: str, **overrides: object) -> LLMChain:
    """All cloud links configured, each with its own key, pointing at two fake servers."""
    settings = make_settings(
        nvidia_api_key="k-nvidia", nvidia_base_url=f"{openai_like}/v1",
        groq_api_key="k-groq1", groq_api_key_2="k-groq2", groq_base_url=openai_like,
        gemini_api_key="k-gemini1", gemini_api_key_2="k-gemini2", gemini_base_url=gemini,
        openrouter_api_key="k-openrouter", openrouter_base_url=f"{openai_like}/api/v1",
        vllm_base_url=f"{openai_like}/v1", vllm_model="served", vllm_api_key="k-vllm",
        llm_timeout_s=CUT, local_llm_timeout_s=CUT, **overrides,
    )
    return LLMChain(settings)


def test_falls_through_in_order_with_reasons_and_no_same_provider_retry(fake) -> None:
    oa = fake("ok", by_key={"k-nvidia": "500", "k-groq2": "429", "k-openrouter": "hang", "k-groq1": "empty"})
    gm = fake("ok", by_key={"k-gemini2": "401", "k-gemini1": "refusal"}, text="from gemini")
    chain = every_link(oa.url, gm.url)
    assert chain.links == ["nvidia", "groq2", "gemini2", "openrouter", "openrouter#2", "groq1",
                           "gemini1", "vllm"]

    started = time.monotonic()
    result = chain.invoke("What was revenue in 2019?")
    elapsed = time.monotonic() - started

    assert result.provider == "vllm"
    assert result.text == "fake answer" and result.model == "fake-model"  # the model the server reports
    reasons = {f.link: f.reason for f in result.failures}
    assert [f.link for f in result.failures] == chain.links[:-1]
    assert reasons["nvidia"].startswith("http 500")
    assert reasons["groq2"].startswith("http 429")
    assert reasons["gemini2"].startswith("http 401")
    assert reasons["openrouter"].startswith("timeout") and reasons["openrouter#2"].startswith("timeout")
    assert reasons["groq1"] == "empty output"
    assert reasons["gemini1"].startswith("refusal")
    # each hung OpenRouter draw costs one cut-off, not a second one (nor the fake's 60 s hang); the others fail at once
    for failure in result.failures:
        if failure.link.startswith("openrouter"):
            assert CUT <= failure.elapsed_s < 2 * CUT, failure
        else:
            assert failure.elapsed_s < CUT
    assert elapsed >= 2 * CUT
    # one request per link: keys show each account was used exactly once (OpenRouter: twice, by design)
    keys = [r.key for r in oa.requests] + [r.key for r in gm.requests]
    assert sorted(keys) == sorted(["k-nvidia", "k-groq2", "k-gemini2", "k-openrouter", "k-openrouter",
                                   "k-groq1", "k-gemini1", "k-vllm"])
    meta = result.metadata()
    assert meta["llm_provider"] == "vllm" and len(meta["llm_failures"]) == 7


def test_each_sdk_reaches_its_own_path(fake) -> None:
    oa = fake("500", by_key={"k-vllm": "ok"})
    gm = fake("500")
    every_link(oa.url, gm.url).invoke("hi")
    paths = {r.key: r.path for r in oa.requests + gm.requests}
    assert paths["k-nvidia"] == "/v1/chat/completions"
    assert paths["k-groq2"] == "/openai/v1/chat/completions"
    assert paths["k-openrouter"] == "/api/v1/chat/completions"
    assert paths["k-vllm"] == "/v1/chat/completions"
    assert paths["k-gemini2"].endswith("/models/gemini-2.5-flash:generateContent")


def test_cheap_skips_nvidia(fake) -> None:
    oa = fake("ok")
    gm = fake("ok")
    chain = every_link(oa.url, gm.url)
    assert chain.invoke("hi", cheap=True).provider == "groq2"
    assert [r.key for r in oa.requests] == ["k-groq2"]
    assert chain.invoke("hi").provider == "nvidia"


def test_links_without_credentials_are_left_out_and_order_is_configurable() -> None:
    chain = LLMChain(make_settings(groq_api_key="g1", openrouter_api_key="o", local_llm=True))
    assert chain.links == ["openrouter", "openrouter#2", "groq1", "local"]
    assert "nvidia" in chain.left_out and "vllm" in chain.left_out
    chain = LLMChain(make_settings(groq_api_key="g1", local_llm=True, llm_order="local, groq1"))
    assert chain.links == ["local", "groq1"]
    with pytest.raises(ValueError, match="unknown LLM link"):
        LLMChain(make_settings(llm_order="groq1,claude"))


class Grade(BaseModel):
    relevant: bool
    reason: str


def test_unparseable_structured_output_moves_on_and_schema_reaches_openai_compatible(fake) -> None:
    oa = fake("ok", text="Sure! It is relevant.")
    vllm = fake("ok", text='{"relevant": true, "reason": "mentions revenue"}')
    settings = make_settings(groq_api_key="k-groq1", groq_base_url=oa.url, vllm_base_url=f"{vllm.url}/v1",
                             vllm_model="served", llm_timeout_s=CUT)
    result = LLMChain(settings).invoke([("system", "You grade."), ("human", "Relevant?")], structured=Grade)
    assert result.provider == "vllm"
    assert result.parsed == Grade(relevant=True, reason="mentions revenue")
    assert result.failures[0].link == "groq1"
    assert result.failures[0].reason.startswith("unparseable structured output")
    # the schema is in the prompt for every link, and enforced natively where the server can
    last = oa.requests[0].body["messages"][-1]  # after the question: the prompt's start stays cacheable
    assert last["role"] == "user" and '"relevant"' in last["content"]
    assert "response_format" not in oa.requests[0].body
    assert vllm.requests[0].body["response_format"]["type"] == "json_schema"


def test_schema_in_the_prompt_drops_pydantic_titles_but_keeps_a_field_named_title() -> None:
    from providers.llm.structured import schema_of

    class Nested(BaseModel):
        title: str

    class Outer(BaseModel):
        inner: Nested
        count: int

    schema = schema_of(Outer)
    assert "title" not in schema and "title" not in schema["properties"]["count"]
    assert schema["$defs"]["Nested"] == {"properties": {"title": {"type": "string"}}, "required": ["title"],
                                         "type": "object"}
    assert Outer.model_validate({"inner": {"title": "t"}, "count": 1})  # still the same model


def test_fenced_json_is_accepted(fake) -> None:
    oa = fake("ok", text='Here:\n```json\n{"relevant": false, "reason": "off topic"}\n```')
    result = LLMChain(make_settings(groq_api_key="k", groq_base_url=oa.url, llm_timeout_s=CUT)).invoke(
        "x", structured=Grade)
    assert result.parsed == Grade(relevant=False, reason="off topic")


def test_all_links_failed_raises_with_every_reason(fake) -> None:
    oa = fake("429")
    chain = LLMChain(make_settings(groq_api_key="a", groq_api_key_2="b", groq_base_url=oa.url,
                                   llm_timeout_s=CUT))
    with pytest.raises(AllLinksFailed) as caught:
        chain.invoke("hi")
    assert [f.link for f in caught.value.failures] == ["groq2", "groq1"]
    with pytest.raises(AllLinksFailed, match="no link configured"):
        LLMChain(make_settings()).invoke("hi")


def test_content_filter_finish_reason_is_a_refusal(fake) -> None:
    oa = fake("filter")
    ok = fake("ok")
    chain = LLMChain(make_settings(nvidia_api_key="n", nvidia_base_url=f"{oa.url}/v1", vllm_base_url=ok.url,
                                   vllm_model="m", llm_timeout_s=CUT))
    result = chain.invoke("hi")
    assert result.provider == "vllm"
    assert result.failures[0].reason == "refusal: finish_reason=content_filter"


# -- streaming ----------------------------------------------------------------------------

def drain(items: object) -> tuple[list[str], list[StreamReset], ChainResult]:
    tokens, resets, final = [], [], None
    for item in items:  # type: ignore[attr-defined]
        if isinstance(item, str):
            tokens.append(item)
        elif isinstance(item, StreamReset):
            resets.append(item)
        else:
            final = item
    assert isinstance(final, ChainResult)
    return tokens, resets, final


def test_stream_hands_over_silently_before_first_token(fake) -> None:
    oa = fake("ok", by_key={"k-nvidia": "500", "k-groq2": "hang"}, text="one two three")
    gm = fake("ok", text="alpha beta gamma")
    tokens, resets, final = drain(every_link(oa.url, gm.url).stream("hi"))
    assert resets == []
    assert "".join(tokens) == "alpha beta gamma" == final.text
    assert final.provider == "gemini2" and final.model == "fake-model"
    assert [f.link for f in final.failures] == ["nvidia", "groq2"]
    assert final.failures[1].reason.startswith("timeout: no first token")


def test_stream_mid_stream_failure_yields_reset_then_next_link(fake) -> None:
    oa = fake("ok", by_key={"k-nvidia": "500", "k-groq2": "midstream"}, text="one two three four")
    gm = fake("ok", text="alpha beta")
    tokens, resets, final = drain(every_link(oa.url, gm.url).stream("hi"))
    assert len(resets) == 1 and resets[0].link == "groq2"
    assert resets[0].reason.startswith("timeout: no next token")
    # consumer sees: two tokens from groq2, a reset, then gemini2's whole answer
    assert tokens[:2] == ["one", " two"]
    assert "".join(tokens[2:]) == "alpha beta" == final.text
    assert final.provider == "gemini2"
    assert [f.link for f in final.failures] == ["nvidia", "groq2"]


def test_stream_gemini_and_refusal_mid_stream(fake) -> None:
    gm = fake("ok", by_key={"k-gemini2": "filter"}, text="a b c")
    chain = LLMChain(make_settings(gemini_api_key="k-gemini1", gemini_api_key_2="k-gemini2",
                                   gemini_base_url=gm.url, llm_timeout_s=CUT))
    tokens, resets, final = drain(chain.stream("hi"))
    assert [r.link for r in resets] == ["gemini2"] and resets[0].reason.startswith("refusal")
    assert final.provider == "gemini1" and final.text == "a b c"
    assert ":streamGenerateContent" in gm.requests[0].path


def test_default_chain_is_shared_and_metadata_is_json_safe(fake) -> None:
    import json

    runtime = build_runtime(make_settings())
    assert runtime.chain() is runtime.chain()
    oa = fake("ok", by_key={"a": "500"})
    result = LLMChain(make_settings(groq_api_key="b", groq_api_key_2="a", groq_base_url=oa.url,
                                    llm_timeout_s=CUT)).invoke("hi")
    meta = json.loads(json.dumps(result.metadata()))
    assert meta["llm_provider"] == "groq1" and meta["llm_model"] == "llama-3.3-70b-versatile"
    assert meta["llm_failures"][0]["link"] == "groq2" and meta["llm_failures"][0]["reason"].startswith("http 500")
    assert meta["llm_usage"] == {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
