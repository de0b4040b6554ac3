"""Route: relevant context → answer; otherwise one more round (rewrite, then web).

"Enough" is one excerpt graded relevant: the answer often sits in one document, and the other
excerpts, from other documents, are then rightly not relevant (a rule asking for half of them spent a
rewrite and a web search on questions whose answer was in view). At most `max_rounds`
extra rounds in all, counted in the state: the first rewrites the query and searches the
documents again, the second searches the web (when enabled). With no documents found at all, or
none near enough the question to pass the relevance floor, a rewrite cannot help, so the web
comes first (or, without it, the answer: the honest refusal).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.configuration import Configuration
from graph.context import Context, context_of
from graph.grading import above_floor
from graph.nodes.common import node
from graph.state import State

Next = Literal["rewrite", "web_search", "generate"]


def decide(state: State, cfg: Configuration, web_available: bool = True) -> tuple[Next, int]:
    """The next step; `web_available`: the web searcher may reach a backend (providers/web_search.py)."""
    grades = state.get("grades") or []
    rounds = int(state.get("rounds") or 0)
    if any(g.get("relevant") is True for g in grades):
        return "generate", rounds
    if rounds >= cfg.max_rounds:
        return "generate", rounds
    rewritten = bool(state.get("rewritten"))
    searched_web = bool(state.get("searched_web")) or not web_available  # unreachable: as if searched
    if grades and not any(above_floor(g, cfg.relevance_floor) for g in grades):
        # off the documents' subject: other words cannot bring the question nearer (no answerable
        # question's excerpts all fell below the floor: evals/results/relevance_floor.md)
        return ("web_search", rounds + 1) if cfg.web_search and not searched_web else ("generate", rounds)
    if grades and not rewritten:
        return "rewrite", rounds + 1
    if cfg.web_search and not searched_web:
        return "web_search", rounds + 1
    if not rewritten:
        return "rewrite", rounds + 1
    return "generate", rounds


@node("route")
def route(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    nxt, rounds = decide(state, cfg, cfg.running.web.available)
    return {"next": nxt, "rounds": rounds}


def after_route(state: State) -> Next:
    return state.get("next") or "generate"
