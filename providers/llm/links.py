"""The chain's links: which providers exist, which are configured, how each chat model is built.

A link is a full provider switch (its own account, endpoint and SDK); the chain never retries
inside one, so every SDK is built with its own retries off and a timeout a little past the
executor cut-off (only so abandoned threads end; the cut-off is what the chain enforces).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from langchain_core.language_models.chat_models import BaseChatModel

if TYPE_CHECKING:
    from settings import Settings

log = logging.getLogger(__name__)

Kind = Literal["nvidia", "groq", "gemini", "openai"]
KNOWN_LINKS = ("nvidia", "groq2", "gemini2", "openrouter", "groq1", "gemini1", "vllm", "local")
# seconds past the cut-off before an SDK gives up on its own, so an abandoned thread ends
SDK_GRACE_S = 2.0


@dataclass(frozen=True)
class LinkSpec:
    """Everything needed to build one link's chat model; `name` is unique within a chain."""

    name: str
    kind: Kind
    model: str | None
    api_key: str = ""
    base_url: str | None = None
    timeout_s: float = 18.0
    skip_when_cheap: bool = False
    native_json_schema: bool = False  # OpenAI-compatible servers that enforce response_format
    local: bool = False  # base URL comes from the embedded model, started on first use

    @property
    def provider(self) -> str:
        return self.name.split("#", 1)[0]


def _secret(value: object) -> str:
    if value is None:
        return ""
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if getter else value).strip()


def _names(csv: str) -> list[str]:
    return [part.strip().lower() for part in csv.split(",") if part.strip()]


def _spec_for(provider: str, settings: Settings) -> LinkSpec | None:
    """The link for `provider` as configured, or None when it has no credentials."""
    cloud = settings.llm_timeout_s
    if provider == "nvidia":
        key = _secret(settings.nvidia_api_key)
        return LinkSpec("nvidia", "nvidia", settings.nvidia_model, key, settings.nvidia_base_url,
                        cloud) if key else None
    if provider in ("groq1", "groq2"):
        key = _secret(settings.groq_api_key if provider == "groq1" else settings.groq_api_key_2)
        return LinkSpec(provider, "groq", settings.groq_model, key, settings.groq_base_url,
                        cloud) if key else None
    if provider in ("gemini1", "gemini2"):
        key = _secret(settings.gemini_api_key if provider == "gemini1" else settings.gemini_api_key_2)
        return LinkSpec(provider, "gemini", settings.gemini_model, key, settings.gemini_base_url,
                        cloud) if key else None
    if provider == "openrouter":
        key = _secret(settings.openrouter_api_key)
        return LinkSpec("openrouter", "openai", settings.openrouter_model, key,
                        settings.openrouter_base_url, cloud) if key else None
    if provider == "vllm":
        if not settings.vllm_base_url:
            return None
        return LinkSpec("vllm", "openai", settings.vllm_model, _secret(settings.vllm_api_key) or "none",
                        settings.vllm_base_url, settings.local_llm_timeout_s, native_json_schema=True)
    if provider == "local":
        if not settings.local_llm:
            return None
        return LinkSpec("local", "openai", "local", "local", None, settings.local_llm_timeout_s,
                        native_json_schema=True, local=True)
    raise ValueError(f"unknown LLM link {provider!r} in LLM_ORDER; known: {', '.join(KNOWN_LINKS)}")


def build_specs(settings: Settings) -> tuple[list[LinkSpec], list[str]]:
    """Links in configured order, and the names left out for lack of credentials."""
    cheap_skip = set(_names(settings.llm_cheap_skip))
    seen: Counter[str] = Counter()
    specs: list[LinkSpec] = []
    left_out: list[str] = []
    for provider in _names(settings.llm_order):
        seen[provider] += 1
        name = provider if seen[provider] == 1 else f"{provider}#{seen[provider]}"
        spec = _spec_for(provider, settings)
        if spec is None:
            left_out.append(name)
            continue
        specs.append(LinkSpec(**{**spec.__dict__, "name": name,
                                 "skip_when_cheap": provider in cheap_skip}))
    return specs, left_out


def make_chat_model(spec: LinkSpec, *, base_url: str | None, temperature: float,
                    max_tokens: int) -> BaseChatModel:
    """Build the LangChain chat model for one link (integration imported lazily)."""
    sdk_timeout = spec.timeout_s + SDK_GRACE_S
    if spec.kind == "groq":
        from langchain_groq import ChatGroq

        return ChatGroq(model=spec.model, api_key=spec.api_key, base_url=base_url, max_retries=0,
                        timeout=sdk_timeout, temperature=temperature, max_tokens=max_tokens)
    if spec.kind == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        # max_retries=1 is "one attempt" in the Google SDK (0 would mean its default, 5)
        return ChatGoogleGenerativeAI(model=spec.model, google_api_key=spec.api_key, base_url=base_url,
                                      max_retries=1, timeout=sdk_timeout, temperature=temperature,
                                      max_output_tokens=max_tokens)
    if spec.kind == "nvidia":
        from langchain_nvidia_ai_endpoints import ChatNVIDIA

        kwargs = {"base_url": base_url} if base_url else {}
        # usage telemetry off: no side traffic to NVIDIA besides the call itself
        return ChatNVIDIA(model=spec.model, api_key=spec.api_key, temperature=temperature,
                          max_completion_tokens=max_tokens, timeout=sdk_timeout, usage_telemetry_enabled=False,
                          **kwargs)
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=spec.model, api_key=spec.api_key, base_url=base_url, max_retries=0,
                      timeout=sdk_timeout, temperature=temperature, max_tokens=max_tokens,
                      stream_usage=True)
