"""The one way to run the graph and watch it: events for the CLI, the chat service and the evals.

Yields ("sources", citations) before the first token (numbered like the final answer's [n]),
("token", piece) as the answer streams, ("reset", provider) when a provider failed mid-answer and
the next one starts over, and last ("done", Outcome).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.outcome import Outcome


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
