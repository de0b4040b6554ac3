"""Fixtures for provider tests: fake provider endpoints and settings that read no real keys."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from settings import Settings
from tests.providers.fakes import FakeProvider

# the card's links as listed (LLM_LINKS, LLM_ORDER unset) and every variable they read, and the
# other providers' credentials, so a key in the CI environment cannot leak into a test
_CLEAN: dict[str, Any] = {
    "llm_links": None, "llm_order": "",
    "nvidia_api_key": None, "nvidia_base_url": None,
    "groq_api_key": None, "groq_api_key_2": None, "groq_base_url": None,
    "gemini_api_key": None, "gemini_api_key_2": None, "gemini_base_url": None,
    "openrouter_api_key": None, "vllm_base_url": None, "vllm_model": None, "vllm_api_key": None,
    "tavily_api_key": None, "tavily_base_url": None, "local_llm": False,
}


def make_settings(**overrides: Any) -> Settings:  # noqa: ANN401
    return Settings(_env_file=None, **{**_CLEAN, **overrides})


@pytest.fixture
def fake() -> Iterator[Callable[..., FakeProvider]]:
    """Factory of FakeProvider endpoints, all closed (and hung requests released) at teardown."""
    made: list[FakeProvider] = []

    def factory(behaviour: str = "ok", **kwargs: Any) -> FakeProvider:  # noqa: ANN401
        provider = FakeProvider(behaviour=behaviour, **kwargs)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.close()
