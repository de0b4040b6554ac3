"""The chain's links: which of the configured links (settings.llm_links) can run, how each chat
model is built.

A link is a full provider switch (its own account, endpoint and SDK); the chain never retries
inside one, so every SDK is built with its own retries off and a timeout a little past the
executor cut-off (only so abandoned threads end; the cut-off is what the chain enforces).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import SecretStr

if TYPE_CHECKING:
    from settings import LinkKind, LLMLink, Settings

log = logging.getLogger(__name__)

# seconds past the cut-off before an SDK gives up on its own, so an abandoned thread ends
SDK_GRACE_S = 2.0


@dataclass(frozen=True)
class LinkSpec:
    """One configured link as the chain runs it; `name` is unique within a chain ("openrouter#2")."""

    name: str
    kind: LinkKind
    model: str | None
    api_key: str = ""
    base_url: str | None = None
    timeout_s: float = 18.0
    complex_only: bool = False  # cheap calls skip it
    native_json_schema: bool = False  # OpenAI-compatible servers that enforce response_format

    @property
    def provider(self) -> str:
        return self.name.split("#", 1)[0]

    @property
    def local(self) -> bool:
        """The embedded model: its base URL and key come from the server, started on first use."""
        return self.kind == "local"


def _names(csv: str) -> list[str]:
    return [part.strip().lower() for part in csv.split(",") if part.strip()]


def _spec_for(link: LLMLink, name: str, settings: Settings) -> LinkSpec | None:
    """The link as the chain runs it, or None when it lacks what its kind needs to be called."""
    timeout = link.timeout_s
    if isinstance(timeout, str):
        timeout = settings.local_llm_timeout_s if timeout == "local" else settings.llm_timeout_s
    spec = LinkSpec(name=name, kind=link.kind, model=link.model, base_url=link.base_url, timeout_s=timeout,
                    complex_only=link.complex_only, native_json_schema=link.native_json_schema)
    if link.kind == "local":
        return replace(spec, model="local", api_key="local") if settings.local_model.enabled else None
    key = link.key.get_secret_value().strip() if link.key is not None else ""
    if not key or (link.kind == "openai-compatible" and not link.base_url):
        return None
    return replace(spec, api_key=key)


def build_specs(settings: Settings) -> tuple[list[LinkSpec], list[str]]:
    """Links in configured order (LLM_ORDER's names, else the list), and those left out for lack
    of credentials."""
    by_name: dict[str, LLMLink] = {}
    for link in settings.llm_links:
        by_name.setdefault(link.name, link)
    order = _names(settings.llm_order) or [link.name for link in settings.llm_links]
    seen: Counter[str] = Counter()
    specs: list[LinkSpec] = []
    left_out: list[str] = []
    for base in order:
        named = by_name.get(base)
        if named is None:
            raise ValueError(f"unknown LLM link {base!r} in LLM_ORDER; known: {', '.join(by_name) or 'none'}")
        seen[base] += 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        spec = _spec_for(named, name, settings)
        if spec is None:
            left_out.append(name)
        else:
            specs.append(spec)
    return specs, left_out


def make_chat_model(spec: LinkSpec, *, base_url: str | None, temperature: float,
                    max_tokens: int) -> BaseChatModel:
    """Build the LangChain chat model for one link (integration imported lazily)."""
    sdk_timeout = spec.timeout_s + SDK_GRACE_S
    model = spec.model
    if model is None:  # LLMChain names an openai-compatible link's model (its server's first) before this
        raise ValueError(f"LLM link {spec.name} names no model")
    if spec.kind == "groq":
        from langchain_groq import ChatGroq

        return ChatGroq(model=model, api_key=SecretStr(spec.api_key), base_url=base_url, max_retries=0,
                        timeout=sdk_timeout, temperature=temperature, max_tokens=max_tokens)
    if spec.kind == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        # max_retries=1 is "one attempt" in the Google SDK (0 would mean its default, 5)
        return ChatGoogleGenerativeAI(model=model, google_api_key=spec.api_key, base_url=base_url,
                                      max_retries=1, timeout=sdk_timeout, temperature=temperature,
                                      max_output_tokens=max_tokens)
    if spec.kind == "nvidia":
        from langchain_nvidia_ai_endpoints import ChatNVIDIA

        kwargs: dict[str, Any] = {"base_url": base_url} if base_url else {}
        # usage telemetry off: no side traffic to NVIDIA besides the call itself
        return ChatNVIDIA(model=model, api_key=spec.api_key, temperature=temperature,
                          max_completion_tokens=max_tokens, timeout=sdk_timeout, usage_telemetry_enabled=False,
                          **kwargs)
    from langchain_openai import ChatOpenAI

    from providers.llm.interrupt import http_client

    # max_completion_tokens: the name ChatOpenAI's max_tokens field takes as an argument; the HTTP client
    # lets a stopped run shut its call's connection (the local model, vLLM and OpenAI then stop generating)
    return ChatOpenAI(model=model, api_key=SecretStr(spec.api_key), base_url=base_url, max_retries=0,
                      timeout=sdk_timeout, temperature=temperature, max_completion_tokens=max_tokens,
                      stream_usage=True, http_client=http_client(sdk_timeout))
