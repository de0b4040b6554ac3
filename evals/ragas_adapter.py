"""RAGAS on the product's own models: the LLM chain as a LangChain chat model, MiniLM as Embeddings.

RAGAS 0.4.x `evaluate()` and `TestsetGenerator` take LangChain models (wrapped in
LangchainLLMWrapper / LangchainEmbeddingsWrapper). Wrapping the whole LLMChain, not its first
link's chat model, keeps the fallback order, cut-offs and provider metadata of the product.

RAGAS asks for JSON by pasting the output model's JSON schema into the prompt. The adapter reads
that schema back and sends it as the chain's structured output, so OpenAI-compatible links (the
embedded llama.cpp model, vLLM) decode under a grammar: a 1.5B model then returns valid JSON
instead of prose that RAGAS's output parser (and its fix-the-format retry) would reject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field

_SCHEMA_MARK = re.compile(r"following schema as specified in JSON Schema:\s*")


def schema_in_prompt(prompt: str) -> dict[str, Any] | None:
    """The JSON schema a RAGAS PydanticPrompt embeds in its text, or None."""
    m = _SCHEMA_MARK.search(prompt)
    if not m:
        return None
    try:
        schema, _end = json.JSONDecoder().raw_decode(prompt, m.end())
    except json.JSONDecodeError:
        return None
    return schema if isinstance(schema, dict) else None


def schema_model(schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model whose JSON schema is `schema` and that accepts any JSON object.

    The chain only needs the schema (for the grammar and the instruction) and a lenient check
    that the reply is a JSON object; RAGAS validates the content with its own model afterwards.
    """

    class RagasOutput(BaseModel):
        model_config = ConfigDict(extra="allow")
        _schema: ClassVar[dict[str, Any]] = schema

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return cls._schema

    RagasOutput.__name__ = str(schema.get("title") or "RagasOutput")
    return RagasOutput


class ChainChatModel(BaseChatModel):
    """A LangChain chat model that answers through an LLMChain (providers/llm)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    chain: Any  # providers.llm.LLMChain (or anything with its invoke signature)
    cheap: bool = False
    grammar: bool = True  # send RAGAS's schema as structured output (see the module docstring)
    calls: list[dict[str, Any]] = Field(default_factory=list)  # provider metadata per call

    @property
    def _llm_type(self) -> str:
        return "thotqen-llm-chain"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        from providers.llm import AllLinksFailed

        prompt = "\n".join(str(m.content) for m in messages)
        schema = schema_in_prompt(prompt) if self.grammar else None
        try:
            result = self.chain.invoke(messages, cheap=self.cheap,
                                       structured=schema_model(schema) if schema else None)
        except AllLinksFailed as exc:
            if schema is None or any("timeout" in f.reason for f in exc.failures):
                raise  # a second try would wait as long again
            # a schema llama.cpp cannot turn into a grammar: ask again in plain text
            result = self.chain.invoke(messages, cheap=self.cheap)
        self.calls.append(result.metadata())
        message = AIMessage(content=result.text, response_metadata={"finish_reason": "stop",
                                                                    "model_name": result.model})
        return ChatResult(generations=[ChatGeneration(message=message)])


class MiniLMEmbeddings(Embeddings):
    """The eval's embedder (the runtime's: the packaged all-MiniLM-L6-v2 unless EMBEDDING_MODEL_PATH
    names another) as LangChain Embeddings."""

    def __init__(self, embedder: Any) -> None:  # providers.protocols.DocumentEmbedder
        self.embedder = embedder

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:  # type: ignore[override]
        return [list(map(float, v)) for v in self.embedder.embed_documents(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return list(map(float, self.embedder.embed_query(text)))


def ragas_models(chain: Any, embedder: Any, *, grammar: bool = True):
    """(LangchainLLMWrapper, LangchainEmbeddingsWrapper, the raw ChainChatModel) for RAGAS, answering
    through `chain` and embedding with `embedder` (the eval's runtime gives both)."""
    import warnings

    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper

    chat = ChainChatModel(chain=chain, grammar=grammar)
    with warnings.catch_warnings():  # the wrappers are deprecated in 0.4 but are what evaluate() takes
        warnings.simplefilter("ignore", DeprecationWarning)
        # bypass_n: the chain has no `n`; RAGAS then asks n times, once per completion
        llm = LangchainLLMWrapper(chat, bypass_n=True)
        emb = LangchainEmbeddingsWrapper(MiniLMEmbeddings(embedder))
    return llm, emb, chat


def offline_tokenizer():  # a ragas.tokenizers.BaseTokenizer
    """A lossless word-level tokenizer for RAGAS's extractors.

    RAGAS's default tokenizer is tiktoken's o200k_base, which tiktoken downloads on first use: it
    fails offline (this machine, CI). Extractors only count tokens to split long texts; words are
    a close enough count (a word is ~1.3 tokens) and decode(encode(text)) == text.
    """
    from ragas.tokenizers import BaseTokenizer

    class WordTokenizer(BaseTokenizer):
        def __init__(self) -> None:
            self._ids: dict[str, int] = {}
            self._words: list[str] = []

        def encode(self, text: str) -> list[int]:
            out = []
            for piece in re.findall(r"\s*\S+\s*|\s+", text):
                if piece not in self._ids:
                    self._ids[piece] = len(self._words)
                    self._words.append(piece)
                out.append(self._ids[piece])
            return out

        def decode(self, tokens: list[int]) -> str:
            return "".join(self._words[i] for i in tokens)

    return WordTokenizer()
