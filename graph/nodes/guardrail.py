"""Guardrail: stop prompt injection, jailbreaks and unsafe requests before any retrieval.

Three signals, cheapest first; any one blocks:
1. rules: phrases that only attacks use ("ignore all previous instructions", "DAN", ...);
2. a learned classifier over the message's embedding and the SecureVector Guardian's scores;
   1 and 2 are the run context's `guard` (providers/classifiers/injection.py, measured in evals/results/guardrail.md);
3. the LLM, only when `guardrail_llm` is on (a 1.5B model on CPU is too slow to ask by default).
A blocked request gets a polite refusal and never reaches retrieval.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import BaseModel

from graph import prompts
from graph.context import Context, context_of
from graph.nodes.common import llm_call, llm_failed, node
from graph.state import State
from providers.classifiers.injection import Verdict

log = logging.getLogger(__name__)


class GuardReply(BaseModel):
    reason: str = ""
    unsafe: str


@node("guardrail")
def guardrail(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    parts = cfg.running
    question = str(state.get("question") or "").strip()
    out: dict[str, Any] = {"blocked": False, "block_reason": ""}
    verdict = parts.guard.assess(question, parts.packaged_embedder)
    if not verdict.blocked and cfg.guardrail_llm:
        try:
            messages = [("system", prompts.GUARD_SYSTEM), ("human", question)]
            result = parts.chain(cfg.llm_order).invoke(messages, cheap=True, structured=GuardReply, config=config)
            out["llm_calls"] = llm_call(state, "guardrail", result)
            reply = result.parsed
            if not isinstance(reply, GuardReply):
                raise TypeError(f"the guardrail's reply is {type(reply).__name__}, not a GuardReply")
            if str(reply.unsafe).strip().lower().startswith("y"):
                verdict = Verdict(True, f"llm: {reply.reason}"[:200])
        except Exception as exc:  # the model is an extra signal, not a gate that can fail
            out["llm_calls"] = llm_failed(state, "guardrail", exc)
    if verdict.blocked:
        log.info("guardrail blocked a question (%s)", verdict.reason)
        out.update(blocked=True, block_reason=verdict.reason)
    return out


@node("refuse")
def refuse(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    return {"answer": prompts.REFUSAL, "citations": [], "cited": []}
