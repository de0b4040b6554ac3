"""LLM links as data: the card's chain from today's variables, LLM_LINKS adding or replacing links."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from providers.llm import LLMChain
from providers.llm.links import build_specs
from settings import CARD_LINKS, KIND_DEFAULTS, LLMLink, Settings, Var
from tests.support.settings import make_settings

CUT = 2.0


@pytest.fixture
def bare_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment holding none of the variables the links read, for settings read from it."""
    readers = [*CARD_LINKS, *KIND_DEFAULTS.values()]
    for name in {n for entry in readers for v in entry.values() if isinstance(v, Var) for n in v.names}:
        monkeypatch.delenv(name.upper(), raising=False)
    for name in ("LLM_LINKS", "LLM_ORDER", "LOCAL_LLM"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_link_added_by_llm_links_alone_is_called_over_http(fake, bare_env: pytest.MonkeyPatch) -> None:
    groq = fake("429")
    acme = fake("ok", text="from acme", model="acme-served")
    bare_env.setenv("GROQ_API_KEY", "k-groq1")
    bare_env.setenv("GROQ_BASE_URL", groq.url)
    bare_env.setenv("LLM_TIMEOUT_S", str(CUT))
    bare_env.setenv("LOCAL_LLM", "false")
    # a card link by name, a third Groq account, a new OpenAI-compatible host: no code, one variable
    bare_env.setenv("LLM_LINKS", json.dumps([
        "groq1",
        {"name": "groq3", "kind": "groq", "key": "k-groq3"},
        {"name": "acme", "kind": "openai-compatible", "base_url": f"{acme.url}/v1", "key": "k-acme",
         "model": "acme-1"},
    ]))
    chain = LLMChain(Settings(_env_file=None))
    assert chain.links == ["groq1", "groq3", "acme"]

    result = chain.invoke("What was revenue in 2019?")

    assert (result.provider, result.text, result.model) == ("acme", "from acme", "acme-served")
    assert [(f.link, f.reason[:8]) for f in result.failures] == [("groq1", "http 429"), ("groq3", "http 429")]
    # groq3 took the kind's base URL (GROQ_BASE_URL) and its own key; acme got its own model
    assert [r.key for r in groq.requests] == ["k-groq1", "k-groq3"]
    assert [(r.path, r.key, r.body["model"]) for r in acme.requests] == [("/v1/chat/completions", "k-acme",
                                                                         "acme-1")]
    # a run's llm_order picks names from the list, the added ones included
    picked = LLMChain(chain.settings.model_copy(update={"llm_order": "acme,groq3"}))
    assert picked.links == ["acme", "groq3"]
    assert picked.invoke("hi").provider == "acme"


def test_the_card_chain_reads_todays_variables_from_a_dotenv_file(tmp_path: Path, bare_env: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GROQ_API_KEY_2=k2\nGOOGLE_API_KEY=g1\nOPENROUTER_API_KEY=o\nVLLM_BASE_URL=http://gpu:8000/v1\n"
                        "GROQ_MODEL=llama-other\n")
    settings = Settings(_env_file=env_file)
    specs, left_out = build_specs(settings)
    assert [s.name for s in specs] == ["groq2", "openrouter", "openrouter#2", "gemini1", "vllm", "local"]
    assert left_out == ["nvidia", "gemini2", "groq1"]
    by_name = {s.name: s for s in specs}
    assert by_name["groq2"].model == "llama-other" and by_name["groq2"].api_key == "k2"
    assert by_name["gemini1"].api_key == "g1"  # GOOGLE_API_KEY, the alias it always had
    assert by_name["vllm"].api_key == "none" and by_name["vllm"].model is None
    assert by_name["vllm"].timeout_s == settings.local_llm_timeout_s and by_name["vllm"].native_json_schema
    assert by_name["openrouter"].timeout_s == 18.0 and by_name["openrouter"].model == "openrouter/free"
    assert by_name["local"].local and by_name["local"].native_json_schema


def test_the_card_chain_is_the_design_cards_order_with_nvidia_complex_only() -> None:
    settings = make_settings(nvidia_api_key="n", groq_api_key="g1", groq_api_key_2="g2", gemini_api_key="m1",
                             gemini_api_key_2="m2", openrouter_api_key="o", vllm_base_url="http://gpu/v1",
                             local_llm=True)
    chain = LLMChain(settings)
    assert chain.links == ["nvidia", "groq2", "gemini2", "openrouter", "openrouter#2", "groq1", "gemini1", "vllm",
                           "local"]
    assert [s.name for s in chain.links_for(cheap=True)] == chain.links[1:]


def test_links_are_checked_where_they_are_configured() -> None:
    with pytest.raises(ValidationError, match="needs a model"):
        LLMLink(name="groq9", kind="groq", key="k")
    with pytest.raises(ValidationError, match="two different LLM links"):
        make_settings(llm_links=[{"name": "a", "kind": "local"}, {"name": "a", "kind": "openai-compatible"}])
    with pytest.raises(ValueError, match="no link of the card"):
        make_settings(llm_links=["groq7"])
    with pytest.raises(ValidationError, match="name"):
        make_settings(llm_links=[{"name": "groq#3", "kind": "groq", "model": "m"}])
    # a repeated name is another attempt at the same link, as in LLM_ORDER
    chain = LLMChain(make_settings(llm_links=["local", {"name": "acme", "kind": "openai-compatible",
                                                        "base_url": "http://acme/v1", "key": "k"}, "local"],
                                   local_llm=True))
    assert chain.links == ["local", "acme", "local#2"]
    assert LLMChain(make_settings(llm_links=[{"name": "acme", "kind": "openai-compatible", "key": "k"}])).left_out \
        == ["acme"]  # an OpenAI-compatible link without a base URL has nowhere to go


def test_the_example_in_the_providers_docs_configures_what_it_says(bare_env: pytest.MonkeyPatch) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "providers.md").read_text()
    example = re.search(r"^LLM_LINKS='(.*?)'$", doc, re.MULTILINE | re.DOTALL)
    assert example, "docs/providers.md shows an LLM_LINKS example"
    bare_env.setenv("LLM_LINKS", example.group(1))
    bare_env.setenv("GROQ_API_KEY", "k1")
    chain = LLMChain(Settings(_env_file=None))
    assert chain.links == ["groq1", "groq3", "together", "local"]
    together = chain.specs[2]
    assert (together.kind, together.base_url, together.timeout_s) == ("openai-compatible",
                                                                     "https://api.together.xyz/v1", 18.0)
