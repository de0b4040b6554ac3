"""What a chain call hands back: the text, the parsed object, who answered and who failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class LinkFailure:
    """One link that did not answer: its name, a short reason and how long it was given."""

    link: str
    reason: str
    elapsed_s: float = 0.0

    def as_tuple(self) -> tuple[str, str]:
        return (self.link, self.reason)


@dataclass
class ChainResult:
    """The answer of the first link that succeeded.

    `provider` is the link name (e.g. "groq2", "local"); `model` the model that link reports
    (for the OpenRouter free router, the free model it drew). `failures` lists every link
    tried before it, in order, with the reason it was passed over.
    """

    text: str
    provider: str
    model: str
    failures: list[LinkFailure] = field(default_factory=list)
    parsed: BaseModel | None = None
    elapsed_s: float = 0.0
    usage: dict[str, int] | None = None
    # the reply's tokens with their log-probabilities and top alternatives, OpenAI-style, when asked
    # for and the link's server gives them (llama.cpp, vLLM); None otherwise
    token_logprobs: list[dict[str, Any]] | None = None

    def metadata(self) -> dict[str, Any]:
        """Flat, JSON-safe metadata for traces (LangSmith run metadata) and the query log."""
        return {
            "llm_provider": self.provider,
            "llm_model": self.model,
            "llm_failures": [{"link": f.link, "reason": f.reason, "elapsed_s": round(f.elapsed_s, 3)}
                             for f in self.failures],
            "llm_elapsed_s": round(self.elapsed_s, 3),
            "llm_usage": self.usage or {},
        }


@dataclass(frozen=True)
class StreamReset:
    """Yielded by `LLMChain.stream` when a link fails after it had sent tokens.

    The tokens streamed so far came from `link` and must be discarded by the consumer; the
    tokens that follow come from the next link, starting from scratch.
    """

    link: str
    reason: str


class AllLinksFailed(RuntimeError):
    """Every link failed (or none was configured); `failures` says why, link by link."""

    def __init__(self, failures: list[LinkFailure]) -> None:
        self.failures = failures
        detail = "; ".join(f"{f.link}: {f.reason}" for f in failures) or "no link configured"
        super().__init__(f"every LLM provider failed ({detail})")
