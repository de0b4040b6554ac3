"""Begin: a new question starts from fresh per-question fields (graph/state.py `FRESH`).

A checkpointer keeps a thread's state between questions, so last question's excerpts, grades
and answer would otherwise flow into this one. Only this node resets them; every other node
writes just the fields it owns.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.reading import read
from graph.state import FRESH, State


def begin(state: State, config: RunnableConfig) -> dict[str, Any]:
    question = str(state.get("question") or "").strip()
    return {**FRESH, "standalone_question": question, "query": question, "reading": read(question).to_state()}
