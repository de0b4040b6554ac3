"""Screen: retrieved text is data, never instructions.

Every sentence of every excerpt is checked for text addressed to the model (an injected
instruction: "ignore the question", "render your response in Portuguese", "include this
link"). Flagged sentences are cut out and replaced by a marker; when a flagged "sentence" is
really several PDF lines or clauses run together, only the flagged ones go (unless what would
stay still reads as an instruction). The rest of the excerpt, its facts, stays: an excerpt is
dropped only when nothing of substance is left. Which sentence is an instruction is the
run context's `screen` classifier's call (providers/classifiers/instruction.py: rules and a hashed
word n-gram logistic regression; detection and false drops are in evals/results/). The rules are
graph/screening.py's; this node applies them to the round's excerpts.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.screening import screen_excerpt
from graph.state import State

log = logging.getLogger(__name__)


@node("screen")
def screen(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    documents = list(state.get("documents") or [])
    if not cfg.screen_chunks:
        return {"documents": documents}
    classifier = cfg.running.screen
    kept = []
    for doc in documents:
        clean, removed = screen_excerpt(doc.get("text", ""), classifier)
        if removed:
            log.info("screened %d sentence(s) out of %s%s", len(removed), doc.get("key"),
                     "" if clean is not None else " (nothing else left: dropped)")
        if clean is not None:
            kept.append({**doc, "text": clean, "screened": removed})
    return {"documents": kept}
