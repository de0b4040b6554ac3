"""Helpers shared by the nodes: timing and route bookkeeping, chat history, LLM call records."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from graph.context import Context
from graph.reading import Reading, read
from graph.state import State
from providers import metrics, telemetry
from providers.llm import NODE_KEY

Node = Callable[[State, RunnableConfig, Runtime[Context]], dict[str, Any]]


def node(name: str) -> Callable[[Node], Node]:
    """Record the node in `route` and its seconds in `timings` (summed over rounds) and in
    thotqen_graph_node_duration_seconds.

    The graph runs one node at a time, so no reducer is needed; `begin` starts both afresh for
    each question. `route` is for traces and reports only: routing reads explicit state fields.
    With tracing on, the node is an OpenTelemetry span of the same name as its LangSmith run.
    Every LLM call the node makes is tagged with its name (`tagged`): the chain tells the self-hosted
    servers which node asks (providers/llm/chain.py), and the tests' fake models answer by it.
    """

    def wrap(fn: Node) -> Node:
        @functools.wraps(fn)
        def run(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
            started = time.perf_counter()
            with telemetry.span(name, **{"graph.node": name, "graph.round": state.get("rounds")}):
                out = fn(state, tagged(config, name), runtime)
            elapsed = time.perf_counter() - started
            metrics.observe(metrics.NODE_SECONDS, elapsed, name)  # not on a raise: that run failed
            timings = dict(state.get("timings") or {})
            timings[name] = round(timings.get(name, 0.0) + elapsed, 4)
            return {**out, "route": [*(state.get("route") or []), name], "timings": timings}

        return run

    return wrap


def tagged(config: RunnableConfig, name: str) -> RunnableConfig:
    """`config` with the calling node in its metadata (NODE_KEY). LangGraph's own `langgraph_node` is
    there only inside a graph run; this one is also there when a node is called alone."""
    return {**config, "metadata": {**(config.get("metadata") or {}), NODE_KEY: name}}


def reading_of(state: State) -> Reading:
    """The standalone question's reading, kept by begin/condense; read here when a node runs alone."""
    question = (state.get("standalone_question") or state.get("question") or "").strip()
    kept = state.get("reading")
    if kept and kept.get("question") == question:
        return Reading.from_state(kept)
    return read(question)


def history(state: State, turns: int) -> list[tuple[str, str]]:
    """The last `turns` user/assistant pairs as (role, text) messages."""
    items = list(state.get("chat_history") or [])[-2 * turns :] if turns > 0 else []
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, dict):
            role, content = item.get("role", "user"), item.get("content", "")
        else:  # (role, content) pairs from callers that send tuples
            role, content = item[0], item[1]
        out.append(("ai" if role in ("assistant", "ai") else "human", str(content)))
    return out


class Calls(TypedDict, total=False):
    """What llm_call and llm_failed read: the run's LLM calls so far (a State has them)."""

    llm_calls: list[dict[str, Any]]


def llm_call(state: Calls, node_name: str, result: Any) -> list[dict[str, Any]]:
    """Append one call's provider metadata to the state's list (what answered, what failed)."""
    record = {"node": node_name, **result.metadata()} if result is not None else {"node": node_name}
    return [*(state.get("llm_calls") or []), record]


def llm_failed(state: Calls, node_name: str, exc: Exception) -> list[dict[str, Any]]:
    failures = [{"link": f.link, "reason": f.reason} for f in getattr(exc, "failures", [])]
    return [*(state.get("llm_calls") or []), {"node": node_name, "error": str(exc)[:300],
                                               "llm_failures": failures}]
