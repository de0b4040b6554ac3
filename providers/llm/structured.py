"""Structured output the same way on every link: the JSON schema in the prompt, a lenient parse.

Provider-native structured output differs from SDK to SDK (and the free OpenRouter draw may
not support it), so every link gets the schema as an instruction and the reply is parsed
here. OpenAI-compatible links (vLLM, the local model) additionally get `response_format`,
which llama.cpp and vLLM enforce with a grammar, so even a 1.5B model returns valid JSON.
An unparseable reply is a link failure: the chain moves on to the next provider.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage, HumanMessage, convert_to_messages
from pydantic import BaseModel, ValidationError

from providers.llm.errors import LinkError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


_NAMED = ("properties", "$defs", "definitions", "patternProperties")  # maps of name -> schema


def _untitled(node: Any) -> Any:  # any JSON value
    if isinstance(node, list):
        return [_untitled(x) for x in node]
    if not isinstance(node, dict):
        return node
    return {key: ({name: _untitled(s) for name, s in value.items()} if key in _NAMED and isinstance(value, dict)
                  else _untitled(value))
            for key, value in node.items() if not (key == "title" and isinstance(value, str))}


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's `title` annotations: they validate nothing and
    cost prompt tokens on every structured call (a field named `title` is kept)."""
    schema: dict[str, Any] = _untitled(model.model_json_schema())
    return schema


def instruction(model: type[BaseModel]) -> str:
    schema = json.dumps(schema_of(model), separators=(",", ":"))
    return (
        "Reply with one JSON object and nothing else (no prose, no code fence). "
        f"It must validate against this JSON schema: {schema}"
    )


def with_instruction(messages: list[BaseMessage], model: type[BaseModel]) -> list[BaseMessage]:
    """Add the schema after the last user message (or as a new one at the end).

    At the end, not in the system message: the prompt's beginning then stays the same as the
    next call's over the same excerpts (grading, then answering), so a server that caches
    prompt prefixes (llama.cpp, vLLM) reads those tokens once.
    """
    note = instruction(model)
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        message = out[i]
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            out[i] = HumanMessage(content=f"{message.content}\n\n{note}")
            return out
    return [*out, HumanMessage(content=note)]


def response_format(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAI-style `response_format` (accepted by vLLM and llama.cpp's server)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "schema": schema_of(model)},
    }


def _candidates(text: str) -> list[str]:
    found = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        found.append(text[start : end + 1])
    found.append(text)
    return found


def parse(text: str, model: type[BaseModel]) -> BaseModel:
    """The first JSON object in `text` that validates; LinkError if there is none."""
    last: Exception | None = None
    for candidate in _candidates(text.strip()):
        try:
            return model.model_validate(json.loads(candidate))
        except (json.JSONDecodeError, ValidationError) as exc:
            last = exc
    detail = " ".join(str(last).split())[:160] if last else "no JSON object"
    raise LinkError(f"unparseable structured output: {detail}")


def to_messages(messages: LanguageModelInput) -> list[BaseMessage]:
    if isinstance(messages, str):
        messages = [("human", messages)]
    return list(convert_to_messages(messages))
