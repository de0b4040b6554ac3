"""Settings that read no real keys: the card's links with every credential and endpoint cleared."""

from __future__ import annotations

from typing import Any

from settings import Settings

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


def make_settings(**overrides: Any) -> Settings:
    return Settings(_env_file=None, **{**_CLEAN, **overrides})
