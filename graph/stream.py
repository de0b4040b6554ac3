"""The one way to run the graph: the configuration of a run, and the loop that runs and watches it.

`run_config` is the only place a run's configuration is put together (who asks, the caller's
tunables, the services the nodes use): the chat service, /v1, /rag, the CLI and the evals all call
it, so how the graph receives its parts changes here alone.

`run_graph` yields ("sources", citations) before the first token (numbered like the final answer's
[n]), ("token", piece) as the answer streams, ("reset", provider) when a provider failed
mid-answer and the next one starts over, and last ("done", Outcome). It is the loop of the CLI, the
chat service (and through it /v1) and the evals; /rag hands the graph itself to LangServe, whose
endpoints stream the graph's own output, under the configuration `run_config` made.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.outcome import Outcome
from graph.services import Services


def run_config(*, owner_id: int | None, user: str, services: Services | None = None,
               tunables: Mapping[str, Any] | None = None, run_name: str | None = None,
               metadata: Mapping[str, Any] | None = None) -> RunnableConfig:
    """The configuration of one run. `tunables`: per-run knobs (tunables.py names; the caller has
    checked their bounds); `services`: the parts the nodes use (None: the process's defaults)."""
    configurable: dict[str, Any] = {**(tunables or {}), "owner_id": owner_id, "user": user}
    if services is not None:
        configurable["services"] = services
    config = RunnableConfig(configurable=configurable)
    if run_name is not None:
        config["run_name"] = run_name
    if metadata is not None:
        config["metadata"] = dict(metadata)
    return config


def run_graph(inputs: dict[str, Any], config: RunnableConfig) -> Iterator[tuple[str, Any]]:
    from graph.builder import graph

    out: dict[str, Any] = {}
    for mode, chunk in graph.stream(inputs, config, stream_mode=["custom", "values"]):
        if mode == "values":
            out = chunk
        elif "sources" in chunk:
            yield "sources", chunk["sources"]
        elif "token" in chunk:
            yield "token", chunk["token"]
        elif "reset" in chunk:
            yield "reset", chunk["reset"]
    yield "done", Outcome.from_state(out)
