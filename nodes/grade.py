"""Grade: ONE batched LLM call judges every excerpt of the round.

The reply is parsed leniently (JSON, JSON in prose or a fence, or "1: yes" lines), but an
excerpt without a readable verdict counts as NOT relevant: a malformed reply must never pass
everything through. Excerpts judged relevant accumulate over rounds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from graph import prompts
from graph.configuration import Configuration
from graph.services import get_services
from graph.state import State
from nodes._common import llm_call, llm_failed, node


class Grade(BaseModel):
    n: int
    reason: str = ""
    relevant: bool | str


class Grades(BaseModel):
    grades: list[Grade]


_YES = {"yes", "y", "true", "relevant", "1"}
_NO = {"no", "n", "false", "irrelevant", "not relevant", "0"}
_ITEM = re.compile(r'"n"\s*:\s*(\d+)[^{}]*?"relevant"\s*:\s*"?(yes|no|true|false)', re.IGNORECASE | re.DOTALL)
_LINE = re.compile(r"^\W*\[?(\d+)\]?\s*[:.)\-]\s*(?:\*\*)?\s*(yes|no|relevant|irrelevant|not relevant)\b",
                   re.IGNORECASE | re.MULTILINE)


def _verdict(value: bool | str) -> bool | None:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    return True if word in _YES else False if word in _NO else None


def parse_grades(text: str, count: int) -> dict[int, bool]:
    """Verdicts by excerpt number (1..count) that could be read; missing numbers are absent."""
    out: dict[int, bool] = {}
    candidates = [m.group(1) for m in re.finditer(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            parsed = Grades.model_validate(json.loads(candidate))
        except (json.JSONDecodeError, ValidationError):
            continue
        for g in parsed.grades:
            verdict = _verdict(g.relevant)
            if 1 <= g.n <= count and verdict is not None:
                out.setdefault(g.n, verdict)
        if out:
            return out
    for rx in (_ITEM, _LINE):
        for m in rx.finditer(text):
            n, verdict = int(m.group(1)), _verdict(m.group(2))
            if 1 <= n <= count and verdict is not None:
                out.setdefault(n, verdict)
        if out:
            return out
    return out


@node("grade")
def grade(state: State, config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    documents = list(state.get("documents") or [])
    seen = [*(state.get("seen") or []), *[d["key"] for d in documents]]
    relevant = list(state.get("relevant") or [])
    if not documents:
        return {"grades": [], "seen": seen, "relevant": relevant}
    question = state.get("standalone_question") or state["question"]
    messages = [("system", prompts.EXCERPTS_SYSTEM),
                ("human", prompts.excerpt_block(documents, question) + prompts.GRADE_TASK)]
    try:
        result = get_services(config, cfg).chain.invoke(messages, cheap=True, config=config)
        verdicts, calls = parse_grades(result.text, len(documents)), llm_call(state, "grade", result)
    except Exception as exc:  # noqa: BLE001 - no grader: nothing counts as relevant
        verdicts, calls = {}, llm_failed(state, "grade", exc)
    grades = [{"n": n, "key": d["key"], "relevant": verdicts.get(n), "name": d.get("name"), "page": d.get("page")}
              for n, d in enumerate(documents, 1)]
    known = {d["key"] for d in relevant}
    relevant += [d for n, d in enumerate(documents, 1) if verdicts.get(n) is True and d["key"] not in known]
    return {"grades": grades, "seen": seen, "relevant": relevant, "llm_calls": calls}
