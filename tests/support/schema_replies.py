"""Scripted replies RAGAS and the judge can parse: a minimal valid instance of the schema in the prompt."""

from __future__ import annotations

import json
from typing import Any

from evals.ragas_adapter import schema_in_prompt


def instance(schema: dict[str, Any], root: dict[str, Any] | None = None, text: str = "ok") -> Any:
    """The smallest object that validates against a (pydantic-made) JSON schema; integers are 1, enums the first."""
    root = root or schema
    if "$ref" in schema:
        return instance(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root, text)
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return instance(schema["anyOf"][0], root, text)
    kind = schema.get("type")
    if kind == "object":
        # a committal answer (RAGAS answer relevancy scores a noncommittal one 0)
        return {name: 0 if name == "noncommittal" else instance(prop, root, text)
                for name, prop in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance(schema.get("items") or {"type": "string"}, root, text)]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return text


def schema_reply(prompt: str, text: str = "ok") -> str | None:
    """A JSON reply for a prompt carrying a RAGAS or chain schema; None when there is none.

    The judge's Verdict says "yes"; every RAGAS verdict is 1 (supported, attributed, useful).
    """
    schema = schema_in_prompt(prompt)
    if schema is None and "It must validate against this JSON schema: " in prompt:  # the chain's own
        tail = prompt.rsplit("It must validate against this JSON schema: ", 1)[1]
        schema, _ = json.JSONDecoder().raw_decode(tail)
    if schema is None:
        return None
    return json.dumps(instance(schema, text=text))
