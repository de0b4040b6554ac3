"""What LangServe's playground needs to work in a plain browser.

1. A configuration schema its form can render and validate: the tunables are `X | None` (unset
   keeps the server's setting), and the playground's form neither renders a `{"type": "null"}`
   branch nor accepts an empty field. The schema it is shown (`/rag/config_schema` and the page)
   names each tunable's plain type with the server's setting as the default; validation is
   unchanged, so API callers may still leave any tunable out.
2. Authentication: the browser's session cookie (api/session.py) signs the page and its runs in;
   web/js/csrf-fetch.js, injected into the page by api/web.py, adds the CSRF header to its POSTs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable
from pydantic import BaseModel

from api.rag import ServedConfig, ServedGraph, Tunables
from graph.configuration import SETTING_OF
from settings import Settings


def without_null(node: Any) -> Any:  # noqa: ANN401 - JSON
    """The schema with every `anyOf: [X, {"type": "null"}]` collapsed to X, and `default: null` dropped."""
    if isinstance(node, list):
        return [without_null(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: without_null(v) for k, v in node.items()}
    branches = out.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(branches):
            del out["anyOf"]
            out = {**kept[0], **out}
    if "default" in out and out["default"] is None:
        del out["default"]
    return out


def tunable_defaults(settings: Settings) -> dict[str, Any]:
    """Each tunable's value on this server (what an unset tunable means)."""
    return {name: getattr(settings, SETTING_OF[name]) for name in Tunables.model_fields}


def playground_schema(settings: Settings) -> dict[str, Any]:
    schema = without_null(ServedConfig.model_json_schema())
    defaults = tunable_defaults(settings)
    tunables = schema["$defs"]["Tunables"]
    for name, prop in tunables["properties"].items():
        prop["default"] = defaults[name]
    schema["properties"]["configurable"]["default"] = defaults
    return schema


def served_graph(graph: Runnable, settings: Settings) -> Runnable:
    """The graph for add_routes, its configuration schema shown as `playground_schema`."""
    shown = playground_schema(settings)

    class ShownConfig(ServedConfig):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # noqa: ANN401
            return shown

    class PlaygroundGraph(ServedGraph):
        def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
            return ShownConfig

    return PlaygroundGraph(bound=graph, kwargs={}, config={})
