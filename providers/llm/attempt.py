"""One LLM link attempt as operators see it: a span named as its LangSmith run (`llm:<link>`) with the
provider, outcome, tokens and cut-off, and the Prometheus series of attempts, failures, cut-offs,
seconds and tokens.

The chain (chain.py) opens one `Attempt` per link it tries and ends it once, ok or failed. The span
is not made current: a streamed attempt yields tokens while it is open.
"""

from __future__ import annotations

import re
import time
from typing import Any

from providers import metrics, telemetry
from providers.llm.errors import LinkTimeout


def reason_class(exc: BaseException, reason: str) -> str:
    """A short, bounded label for a failure (the full reason stays in logs and the query log):
    cutoff, http_429, sdk_timeout, connection, refusal, empty_output, invalid_output or error."""
    if isinstance(exc, LinkTimeout):
        return "cutoff"
    lowered = reason.lower()
    if m := re.match(r"http (\d{3})", lowered):
        return f"http_{m.group(1)}"
    for prefix, label in (("sdk timeout", "sdk_timeout"), ("connection error", "connection"),
                          ("refusal", "refusal"), ("empty output", "empty_output")):
        if lowered.startswith(prefix):
            return label
    if "json" in lowered or "schema" in lowered or "parse" in lowered or "validation" in lowered:
        return "invalid_output"
    return "error"


def declare(link: str) -> None:
    """Export a link's counters at 0 before its first attempt, so that a rate over them (the dashboard,
    the alerts) has a series to read rather than none until the first failure or cut-off."""
    for outcome in ("ok", "failed"):
        metrics.count(metrics.LLM_ATTEMPTS, link, outcome, amount=0)
    metrics.count(metrics.LLM_CUTOFFS, link, amount=0)
    for direction in ("input", "output"):
        metrics.count(metrics.LLM_TOKENS, link, direction, amount=0)


class Attempt:
    def __init__(self, link: str, model: str | None, cutoff_s: float, *, streamed: bool) -> None:
        self.link = link
        self.started = time.monotonic()  # the chain sets it again once the link's SDK is built
        self.span = telemetry.start_span(f"llm:{link}", **{"llm.provider": link, "llm.model": model,
                                                             "llm.cutoff_s": cutoff_s, "llm.streamed": streamed})

    def ok(self, model: str, usage: dict[str, int] | None) -> None:
        metrics.count(metrics.LLM_ATTEMPTS, self.link, "ok")
        metrics.observe(metrics.LLM_SECONDS, time.monotonic() - self.started, self.link, "ok")
        usage = usage or {}
        for direction in ("input", "output"):
            if usage.get(f"{direction}_tokens"):
                metrics.count(metrics.LLM_TOKENS, self.link, direction, amount=usage[f"{direction}_tokens"])
                metrics.observe(metrics.LLM_CALL_TOKENS, usage[f"{direction}_tokens"], self.link, direction)
        attributes: dict[str, Any] = {"llm.outcome": "ok", "llm.response.model": model,
                                      "llm.usage.input_tokens": usage.get("input_tokens"),
                                      "llm.usage.output_tokens": usage.get("output_tokens")}
        telemetry.end(self.span, **attributes)

    def failed(self, exc: BaseException, reason: str) -> None:
        kind = reason_class(exc, reason)
        metrics.count(metrics.LLM_ATTEMPTS, self.link, "failed")
        metrics.observe(metrics.LLM_SECONDS, time.monotonic() - self.started, self.link, "failed")
        metrics.count(metrics.LLM_FAILURES, self.link, kind)
        if kind == "cutoff":
            metrics.count(metrics.LLM_CUTOFFS, self.link)
        telemetry.end(self.span, reason, **{"llm.outcome": "failed", "llm.failure": kind,
                                            "llm.cut_off": kind == "cutoff", "llm.failure.reason": reason[:300]})
