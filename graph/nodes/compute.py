"""Compute: the calculation a question asks for, done by code over the numbered facts.

The operation comes from the question's words (graph/calc.py `choose_op`), its operands from the
question's phrases matched to the facts' row labels and periods (graph/operands.py). Python
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

from graph.calc import CalcError, choose_op, compute
from graph.context import Context
from graph.facts import stored_facts
from graph.figures import asked_unit
from graph.nodes.common import node
from graph.nodes.generate import excerpt_numbers
from graph.operands import choose
from graph.state import State

log = logging.getLogger("thotqen.compute")


@node("compute")
def compute_node(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    question = state.get("standalone_question") or state["question"]
    items = list(state.get("facts") or [])
    op = choose_op(question) if items else None
    if op is None:
        return {"calculation": None}
    facts = stored_facts(items, excerpt_numbers(state))
    request = choose(question, op, facts, set(state.get("company_words") or []))
    if request is None:
        log.info("no calculation: the facts hold no operands for %s", op)
        return {"calculation": None}
    try:
        result = compute(request, facts, asked_unit(question))
    except CalcError as exc:
        log.info("no calculation: %s", exc)
        return {"calculation": None}
    return {"calculation": result.as_dict()}
