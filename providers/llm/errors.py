"""Turn whatever a provider SDK raised or returned into a short, loggable failure reason."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

# finish reasons that mean the provider refused or filtered the answer
_REFUSAL_FINISH = {
    "content_filter",
    "safety",
    "recitation",
    "prohibited_content",
    "blocklist",
    "spii",
    "refusal",
    "image_safety",
}


class LinkError(Exception):
    """A link answered, but unusably (refusal, empty output, unparseable structured output)."""


class LinkTimeout(LinkError):
    """The executor cut-off fired before the link answered."""


def status_code(exc: BaseException) -> int | None:
    """The HTTP status behind an SDK exception (or the exceptions it wraps), whichever SDK."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = _own_status(current)
        if code is not None:
            return code
        current = current.__cause__ or current.__context__
    return None


def _own_status(exc: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    if isinstance(value, int):
        return value
    # langchain-nvidia-ai-endpoints raises plain Exceptions whose message starts "[429] ..."
    text = str(exc).lstrip()
    if text.startswith("[") and text[1:4].isdigit() and text[4:5] == "]":
        return int(text[1:4])
    return None


def describe(exc: BaseException) -> str:
    """A one-line reason: 'timeout', 'http 429', 'refusal', ... followed by the detail."""
    if isinstance(exc, LinkError):
        return str(exc)
    message = " ".join(str(exc).split())[:200]
    code = status_code(exc)
    name = type(exc).__name__
    if code is not None:
        return f"http {code}: {name}: {message}"
    lowered = f"{name} {message}".lower()
    if "timeout" in lowered or "timed out" in lowered:
        return f"sdk timeout: {name}: {message}"
    if "connect" in lowered:
        return f"connection error: {name}: {message}"
    return f"error: {name}: {message}"


def refusal_reason(message: BaseMessage) -> str | None:
    """Why a message counts as a refusal (a filter, a `refusal` field), or None."""
    meta: dict[str, Any] = dict(getattr(message, "response_metadata", {}) or {})
    extra: dict[str, Any] = dict(getattr(message, "additional_kwargs", {}) or {})
    refusal = extra.get("refusal") or meta.get("refusal")
    if refusal:
        return f"refusal: {' '.join(str(refusal).split())[:160]}"
    finish = meta.get("finish_reason") or meta.get("stop_reason")
    name = str(getattr(finish, "name", finish) or "").lower()
    if name in _REFUSAL_FINISH:
        return f"refusal: finish_reason={name}"
    feedback = meta.get("prompt_feedback") or {}
    block = feedback.get("block_reason") if isinstance(feedback, dict) else None
    if block:
        return f"refusal: prompt blocked ({block})"
    return None
