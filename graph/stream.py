"""The one way to run the graph: the configuration of a run, and the loop that runs and watches it.

`run_config` is the only place a run's configuration is put together (who asks, the caller's
tunables) and `run_context` the only place it becomes the run's LangGraph context with the running
parts (graph/context.py): the chat service, /v1, /rag, the CLI and the evals all call them.

`run_graph` yields ("sources", citations) before the first token (numbered like the final answer's
[n]), ("draft_sources", citations) and ("draft", piece) as the model writes (before the check),
("token", piece) as the checked answer streams,
("reset", provider) when a provider failed mid-answer and the next one starts over, and last
("done", Outcome). It is the loop of the CLI, the
chat service (and through it /v1) and the evals; /rag hands the graph itself to LangServe, whose
endpoints stream the graph's own output, under the configuration `run_config` made.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig

from graph.builder import graph
from graph.context import Context, GraphParts
from graph.outcome import Outcome
from graph.state import InputState


def run_config(*, owner_id: int | None, user: str, tunables: Mapping[str, Any] | None = None,
               run_name: str | None = None, metadata: Mapping[str, Any] | None = None,
               workspace_id: int | None = None) -> RunnableConfig:
    """The configuration of one run: who asks (and the workspace they limit it to, if any) and the
    per-run knobs (tunables.py names; the caller has checked their bounds), as JSON that LangServe's
    config carries too."""
    configurable: dict[str, Any] = {**(tunables or {}), "owner_id": owner_id, "user": user,
                                    "workspace_id": workspace_id}
    config = RunnableConfig(configurable=configurable)
    if run_name is not None:
        config["run_name"] = run_name
    if metadata is not None:
        config["metadata"] = dict(metadata)
    return config


def run_context(parts: GraphParts, config: RunnableConfig | None) -> Context:
    """The runtime context of a run with this configuration: its knobs over the deployment's, and the parts."""
    return Context.for_run(parts, (config or {}).get("configurable"))


def run_graph(inputs: InputState, config: RunnableConfig, parts: GraphParts) -> Iterator[tuple[str, Any]]:
    out: dict[str, Any] = {}
    for part in graph.stream(inputs, config, context=run_context(parts, config), stream_mode=["custom", "values"]):
        # a list of modes yields (mode, chunk) pairs; LangGraph types its items as one mode's chunks
        mode, chunk = cast(tuple[str, dict[str, Any]], part)
        if mode == "values":
            out = chunk
        elif "sources" in chunk:
            yield "sources", chunk["sources"]
        elif "token" in chunk:
            yield "token", chunk["token"]
        elif "draft" in chunk:
            yield "draft", chunk["draft"]
        elif "draft_sources" in chunk:
            yield "draft_sources", chunk["draft_sources"]
        elif "reset" in chunk:
            yield "reset", chunk["reset"]
    yield "done", Outcome.from_state(out)


class FinalState(BaseCallbackHandler):
    """Keeps the root run's final state, from which a streamed run's outcome is read (LangServe's
    /rag streams yield the graph's own chunks, patches or events, none of them the state itself)."""

    def __init__(self) -> None:
        self.root: uuid.UUID | None = None
        self.state: dict[str, Any] | None = None

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: uuid.UUID,
                       parent_run_id: uuid.UUID | None = None, **kwargs: Any) -> None:
        if parent_run_id is None and self.root is None:
            self.root = run_id

    def on_chain_end(self, outputs: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        if run_id == self.root and isinstance(outputs, dict):
            self.state = outputs
