"""The wiring: nodes, conditional edges and the compiled `graph` (served by `langgraph dev`).

The only module that imports the nodes; nodes import state, configuration, prompts and services.

    begin → guardrail ─blocked→ refuse
        │ history → condense → (hyde) → retrieve → rerank → screen → grade → route
        └ no history ─────────↗                                              │
    route: enough relevant → generate; else rewrite → retrieve …, or web_search → screen …
"""

from __future__ import annotations

import warnings
from typing import Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from graph.configuration import Configuration
from graph.nodes.begin import begin
from graph.nodes.condense import condense
from graph.nodes.generate import generate
from graph.nodes.grade import grade
from graph.nodes.guardrail import guardrail, refuse
from graph.nodes.hyde import hyde
from graph.nodes.rerank import rerank
from graph.nodes.retrieve import retrieve
from graph.nodes.rewrite import rewrite
from graph.nodes.route import after_route, route
from graph.nodes.screen import screen
from graph.nodes.web_search import web_search
from graph.state import InputState, OutputState, State


def _hyde_on(config: RunnableConfig) -> bool:
    return Configuration.from_runnable_config(config).hyde


def after_guardrail(state: State, config: RunnableConfig) -> Literal["refuse", "condense", "hyde", "retrieve"]:
    if state.get("blocked"):
        return "refuse"
    if state.get("chat_history"):
        return "condense"
    return "hyde" if _hyde_on(config) else "retrieve"


def after_condense(state: State, config: RunnableConfig) -> Literal["hyde", "retrieve"]:
    return "hyde" if _hyde_on(config) else "retrieve"


def build() -> StateGraph:
    with warnings.catch_warnings():
        # config_schema is deprecated in LangGraph 1.x but is what gives Studio its configuration form
        warnings.simplefilter("ignore")
        builder = StateGraph(State, input_schema=InputState, output_schema=OutputState, config_schema=Configuration)
    for name, fn in [("begin", begin), ("guardrail", guardrail), ("refuse", refuse), ("condense", condense),
                     ("hyde", hyde), ("retrieve", retrieve), ("rerank", rerank), ("screen", screen), ("grade", grade),
                     ("route", route), ("rewrite", rewrite), ("web_search", web_search), ("generate", generate)]:
        builder.add_node(name, fn)
    builder.add_edge(START, "begin")
    builder.add_edge("begin", "guardrail")
    builder.add_conditional_edges("guardrail", after_guardrail)
    builder.add_edge("refuse", END)
    builder.add_conditional_edges("condense", after_condense)
    builder.add_edge("hyde", "retrieve")
    builder.add_edge("retrieve", "rerank")
    builder.add_edge("rerank", "screen")
    builder.add_edge("screen", "grade")
    builder.add_edge("grade", "route")
    builder.add_conditional_edges("route", after_route)
    builder.add_edge("rewrite", "retrieve")
    builder.add_edge("web_search", "screen")
    builder.add_edge("generate", END)
    return builder


graph = build().compile()
graph.name = "thotqen"
