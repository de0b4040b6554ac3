"""The wiring: nodes, conditional edges and the compiled `graph` (served by `langgraph dev`).

The only module that imports the nodes; nodes import state, context, configuration and prompts.
The running parts come with each run as LangGraph's runtime context (graph/context.py).

    begin → guardrail ─blocked→ refuse
        │ history → condense → answerable ─cannot→ generate
        └ no history ─────────↗     └→ (hyde) → retrieve → rerank → screen → grade → route
    route: enough relevant → facts → compute → choose ─figure composed→ verify
                                                   └ otherwise → generate → verify
           else rewrite → retrieve …, or web_search → screen …
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from graph.context import Context
from graph.nodes.answerable import after_answerable, answerable
from graph.nodes.begin import begin
from graph.nodes.choose import after_choose, choose
from graph.nodes.compute import compute_node
from graph.nodes.condense import condense
from graph.nodes.facts import facts
from graph.nodes.generate import generate
from graph.nodes.grade import grade
from graph.nodes.guardrail import guardrail, refuse
from graph.nodes.hyde import hyde
from graph.nodes.rerank import rerank
from graph.nodes.retrieve import retrieve
from graph.nodes.rewrite import rewrite
from graph.nodes.route import after_route, route
from graph.nodes.screen import screen
from graph.nodes.verify import verify_node
from graph.nodes.web_search import web_search
from graph.state import InputState, OutputState, State


def after_guardrail(state: State) -> Literal["refuse", "condense", "answerable"]:
    if state.get("blocked"):
        return "refuse"
    if state.get("chat_history"):
        return "condense"
    return "answerable"


def build(context_schema: type[Context] = Context) -> StateGraph[State, Context, InputState, OutputState]:
    """The graph's wiring; `context_schema` is what each run is handed (Studio's entry gives a subclass)."""
    builder = StateGraph(State, context_schema=context_schema, input_schema=InputState, output_schema=OutputState)
    for name, fn in [("begin", begin), ("guardrail", guardrail), ("refuse", refuse), ("condense", condense),
                     ("answerable", answerable),
                     ("hyde", hyde), ("retrieve", retrieve), ("rerank", rerank), ("screen", screen), ("grade", grade),
                     ("route", route), ("rewrite", rewrite), ("web_search", web_search), ("facts", facts),
                     ("compute", compute_node), ("choose", choose), ("generate", generate), ("verify", verify_node)]:
        # LangGraph's overloads list no (state, config, runtime) node; it passes them by parameter name
        builder.add_node(name, fn)  # type: ignore[call-overload]
    builder.add_edge(START, "begin")
    builder.add_edge("begin", "guardrail")
    builder.add_conditional_edges("guardrail", after_guardrail)
    builder.add_edge("refuse", END)
    builder.add_edge("condense", "answerable")
    builder.add_conditional_edges("answerable", after_answerable)
    builder.add_edge("hyde", "retrieve")
    builder.add_edge("retrieve", "rerank")
    builder.add_edge("rerank", "screen")
    builder.add_edge("screen", "grade")
    builder.add_edge("grade", "route")
    builder.add_conditional_edges("route", after_route,
                                  {"rewrite": "rewrite", "web_search": "web_search", "generate": "facts"})
    builder.add_edge("facts", "compute")
    builder.add_edge("compute", "choose")
    builder.add_conditional_edges("choose", after_choose)
    builder.add_edge("rewrite", "retrieve")
    builder.add_edge("web_search", "screen")
    builder.add_edge("generate", "verify")
    builder.add_edge("verify", END)
    return builder


graph = build().compile()
graph.name = "thotqen"
