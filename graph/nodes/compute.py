"""Compute: the calculation a question asks for, done by code over the numbered facts.

The operation comes from the question's words (graph/calc.py `choose_op`), its operands from the
question's phrases matched to the facts' row labels and periods (graph/operands.py); a formula
the question defines ("DPO is defined as: 365 * (average accounts payable ...) / (...)") is read
and computed by graph/formula.py. Python
computes and rounds as the question asks; the result and its working, each operand cited
("1,577 / 32,765 = 0.05 [1][2]"), go to generation and into the answer. No operands found, no
calculation: generation then has the facts alone, and the check after it (graph/nodes/verify.py)
refuses any figure the model computed itself.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.facts import stored_facts
from graph.formula import calculation_for
from graph.nodes.common import node
from graph.nodes.generate import excerpt_numbers
from graph.readers import readers
from graph.state import State

log = logging.getLogger("thotqen.compute")


@node("compute")
def compute_node(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    question = state.get("standalone_question") or state["question"]
    items = list(state.get("facts") or [])
    if not items:
        return {"calculation": None}
    facts = stored_facts(items, excerpt_numbers(state))
    cfg = context_of(runtime, config)
    store = cfg.running.evidence
    with store.shelf(readers(state, store, cfg)) as shelf:
        result = calculation_for(question, facts, ignore=set(state.get("company_words") or []),
                                 words=shelf.glossary_words)
    if result is None:
        log.info("no calculation for the question over %d facts", len(facts))
        return {"calculation": None}
    return {"calculation": result.as_dict()}
