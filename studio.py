"""`langgraph dev`'s entry (langgraph.json): the graph and its auth handler over one runtime.

LangGraph's server loads this module once per process: it builds the runtime here, as the server
and the CLI do at theirs. Studio's form sends the knobs it shows as the run's context; the rest are
the deployment's settings and the parts are this process's.
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from api.langgraph_auth import make_auth
from graph.builder import build
from graph.context import Context
from runtime import build_runtime

runtime = build_runtime()


class StudioContext(Context):
    @model_validator(mode="before")
    @classmethod
    def _with_the_deployment(cls, values: Any) -> dict[str, Any]:  # what Studio sent
        sent = values if isinstance(values, dict) else {}
        return {**Context.defaults(runtime.settings), **Context.overrides(sent), "parts": runtime}


graph = build(StudioContext).compile()
graph.name = "thotqen"
auth = make_auth(lambda: (runtime.tokens, runtime.database))
