"""The embedded local model: assembly with a sha256 check, and the real model behind the chain."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import providers.local_model as lm
from providers.llm import LLMChain, StreamReset
from tests.support.settings import make_settings


def _parts(tmp_path: Path, blobs: list[bytes]) -> list[Path]:
    paths = []
    for i, blob in enumerate(blobs):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(blob)
        paths.append(path)
    return paths


def test_assembly_concatenates_verifies_and_is_done_once(tmp_path: Path, monkeypatch) -> None:
    blobs = [b"GGUF-part-one", b"-two", b"-three"]
    monkeypatch.setattr(lm, "part_paths", lambda: _parts(tmp_path, blobs))
    monkeypatch.setattr(lm, "MODEL_SHA256", hashlib.sha256(b"".join(blobs)).hexdigest())
    home = tmp_path / "home"
    path = lm.ensure_model_file(home)
    assert path == home / "models" / lm.MODEL_FILE
    assert path.read_bytes() == b"".join(blobs)

    def parts_gone() -> list[Path]:
        raise AssertionError("re-assembled although the verified file is there")

    monkeypatch.setattr(lm, "part_paths", parts_gone)
    assert lm.ensure_model_file(home) == path
    # a changed file is re-assembled
    path.write_bytes(b"tampered")
    monkeypatch.setattr(lm, "part_paths", lambda: _parts(tmp_path, blobs))
    assert lm.ensure_model_file(home).read_bytes() == b"".join(blobs)


def test_assembly_refuses_a_wrong_sha256(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(lm, "part_paths", lambda: _parts(tmp_path, [b"not", b"the model"]))
    with pytest.raises(lm.ModelUnavailable, match="sha256"):
        lm.ensure_model_file(tmp_path / "home")
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_packaged_parts_are_installed() -> None:
    paths = lm.part_paths()
    assert len(paths) == 22 and all(p.is_file() for p in paths)
    assert sum(p.stat().st_size for p in paths) > 900_000_000


# -- the real model (Qwen2.5-Coder-1.5B, ~1 GB, loads in seconds) ---------------------------

@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[lm.LocalServer]:
    """The process-wide server, its 1 GB model assembled in a pytest temp dir and removed after."""
    home = tmp_path_factory.mktemp("local-llm-home")
    server = lm.get_local_server(make_settings(local_llm=True, thotqen_home=home))
    yield server
    lm.shutdown_local_server()
    shutil.rmtree(home / "models", ignore_errors=True)


def test_no_keys_answers_through_the_local_model(local: lm.LocalServer) -> None:
    chain = LLMChain(make_settings(local_llm=True, llm_max_tokens=8), local=lambda: local)
    assert chain.links == ["local"]
    result = chain.invoke([("system", "Answer with a number only."), ("human", "What is 2 + 3?")])
    assert result.provider == "local" and result.failures == []
    assert "5" in result.text
    assert result.usage and result.usage["input_tokens"] > 0


class Verdict(BaseModel):
    # reason first: a 1.5B model judges much better when it writes its reason before the verdict
    reason: str
    relevant: bool


def test_local_structured_output_is_grammar_constrained(local: lm.LocalServer) -> None:
    chain = LLMChain(make_settings(local_llm=True, llm_max_tokens=64), local=lambda: local)
    result = chain.invoke(
        [("system", "You judge whether a passage contains information that helps answer a question."),
         ("human", "Question: What was 3M's 2018 capital expenditure?\n"
                   "Passage: Purchases of property, plant and equipment were $1,577 million in 2018.\n"
                   "Is the passage relevant to the question?")],
        structured=Verdict,
    )
    assert isinstance(result.parsed, Verdict) and result.parsed.relevant is True
    assert result.text.lstrip().startswith("{")  # the grammar allows nothing but the JSON object


def test_the_graders_verdicts_come_with_probabilities(local: lm.LocalServer) -> None:
    from graph import prompts
    from graph.grading import verdicts_model, yes_probabilities

    chain = LLMChain(make_settings(local_llm=True, llm_max_tokens=64), local=lambda: local)
    excerpts = [{"name": "aurora.pdf", "page": 2,
                 "text": "Aurora Widgets' total revenue for fiscal 2023 was $412 million."},
                {"name": "aurora.pdf", "page": 9, "text": "The cafeteria on the second floor serves lunch at noon."}]
    question = "What was Aurora Widgets' total revenue in fiscal 2023?"
    result = chain.invoke([("system", prompts.EXCERPTS_SYSTEM),
                           ("human", prompts.excerpt_block(excerpts, question) + prompts.GRADE_TASK)],
                          cheap=True, structured=verdicts_model(2), token_probabilities=True)
    assert result.token_logprobs, "the local server gives token log-probabilities"
    p_yes = yes_probabilities(result.token_logprobs)
    assert set(p_yes) == {1, 2} and all(0.0 <= p <= 1.0 for p in p_yes.values())
    assert p_yes[1] > p_yes[2], p_yes


def test_local_stream(local: lm.LocalServer) -> None:
    chain = LLMChain(make_settings(local_llm=True, llm_max_tokens=12), local=lambda: local)
    items = list(chain.stream("Count from 1 to 5, separated by commas."))
    tokens = [i for i in items if isinstance(i, str)]
    assert not any(isinstance(i, StreamReset) for i in items)
    assert len(tokens) > 1 and items[-1].text == "".join(tokens).strip()
    assert "1" in items[-1].text and "3" in items[-1].text


def test_cloud_sdks_talk_to_the_local_model(local: lm.LocalServer, fake) -> None:
    """OpenRouter (OpenAI SDK), Groq and NVIDIA clients, each by base URL, against the real model.

    A small forwarding server maps each SDK's path (/openai/v1/..., /api/v1/...) onto llama.cpp.
    """
    proxy = fake("proxy", upstream=local.base_url, upstream_key=local.api_key)
    for name, overrides in {
        "openrouter": {"openrouter_api_key": "k", "openrouter_base_url": f"{proxy.url}/api/v1"},
        "groq1": {"groq_api_key": "k", "groq_base_url": proxy.url},
        "nvidia": {"nvidia_api_key": "k", "nvidia_base_url": f"{proxy.url}/v1"},
        # the vLLM path straight at llama.cpp, its model found by listing
        "vllm": {"vllm_base_url": local.base_url, "vllm_api_key": local.api_key},
    }.items():
        chain = LLMChain(make_settings(llm_max_tokens=8, llm_timeout_s=60, local_llm_timeout_s=60,
                                       **overrides))
        result = chain.invoke([("system", "Answer with one word."), ("human", "What colour is the sky?")])
        assert result.provider == name, result.failures
        assert "blue" in result.text.lower()


def test_local_server_refuses_requests_without_its_key(local: lm.LocalServer) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{local.base_url}/chat/completions", b'{"messages": []}',
                                     {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 401
