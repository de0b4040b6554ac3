"""The LLM fallback chain: one call, many providers, one answer that says who gave it.

    chain = LLMChain(settings, local=...)     # runtime.py builds the process's chains
    result = chain.invoke(messages, cheap=False, structured=None, config=None)
    result.text, result.parsed, result.provider, result.model, result.failures, result.metadata()
    for item in chain.stream(messages, cheap=False):
        str -> a piece of text; StreamReset -> discard what was shown; ChainResult -> the end

- `messages`: anything LangChain chat models accept (a string, (role, text) tuples, messages).
- Links: settings.llm_links (LLM_LINKS), by default the card's nvidia, groq2, gemini2,
  openrouter (twice: two free draws), groq1, gemini1, vllm, local; LLM_ORDER (or a run's
  llm_order) picks names from it. A link without credentials is left out; `local` needs none,
  so a fresh install answers with no keys at all.
- Each call runs in a worker thread cut off after the link's timeout (LLM_TIMEOUT_S, 18 s;
  LOCAL_LLM_TIMEOUT_S for vllm/local). A timeout, any HTTP error (429, 5xx, 401, ...), a refusal (content filter,
  `refusal` field, blocked prompt), empty output or, with `structured=Model`, output that does
  not validate, moves on to the next link: a full provider switch, never a retry of the same one.
- `cheap=True` skips the complex-only links (NVIDIA's 70B by default).
- `structured=SomePydanticModel` returns the validated object in `result.parsed`.
- Streaming: the first token must arrive within the cut-off, and so must each next one. A link
  that fails before its first token is replaced silently; one that fails mid-stream yields a
  `StreamReset(link, reason)` and the next link answers from scratch.
- Every link failed: `AllLinksFailed` with `.failures`.
- A call made inside a graph node carries the node's name in its config metadata (NODE_KEY); the
  self-hosted links (vllm, local) are sent it as the NODE_HEADER header.
"""

from providers.llm.chain import NODE_HEADER, NODE_KEY, LLMChain, node_of
from providers.llm.errors import LinkError, LinkTimeout
from providers.llm.links import LinkSpec
from providers.llm.result import AllLinksFailed, ChainResult, LinkFailure, StreamReset

__all__ = [
    "AllLinksFailed",
    "ChainResult",
    "LLMChain",
    "LinkError",
    "LinkFailure",
    "LinkSpec",
    "LinkTimeout",
    "NODE_HEADER",
    "NODE_KEY",
    "StreamReset",
    "node_of",
]
