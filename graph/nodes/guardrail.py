"""Guardrail: stop prompt injection, jailbreaks and unsafe requests before any retrieval.

Three signals, cheapest first; any one blocks:
1. rules: phrases that only attacks use ("ignore all previous instructions", "DAN", ...);
2. a learned classifier: MiniLM embedding of the message plus the packaged SecureVector
   Guardian's scores, logistic regression trained on the jailbreak training split
   (evals/guardrail.py writes nodes/guardrail_weights.json; measured in evals/results/);
3. the LLM, only when `guardrail_llm` is on (a 1.5B model on CPU is too slow to ask by default).
A blocked request gets a polite refusal and never reaches retrieval.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import BaseModel

from graph import prompts
from graph.context import Context, context_of
from graph.nodes.common import llm_call, llm_failed, node
from graph.state import State

log = logging.getLogger(__name__)

WEIGHTS = Path(__file__).with_name("guardrail_weights.json")

_RULES: dict[str, str] = {
    "override": r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}"
                r"\b(previous|prior|above|earlier|all|your|the)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|guidelines|directives|restrictions|programming)\b",
    "reveal": r"\b(reveal|show|print|repeat|output|leak)\b[^.\n]{0,30}\b(system prompt|hidden prompt|initial prompt|"
              r"your instructions)\b",
    "from_now_on": r"\bfrom now on\b[^.\n]{0,60}\byou\b",
    "character": r"\b(stay|remain|break|breaking|stays) (in |out of )?character\b",
    "forget": r"\bforget (everything|all)\b",
    "never_refuse": r"\b(never|not|won't|will not|cannot|can't|must not|mustn't) (ever )?refuse\b|\bnever decline\b",
    "any_harm": r"\bno matter (how|what)\b[^.\n]{0,40}\b(immoral|unethical|illegal|offensive|harmful|dangerous)",
    "tokens": r"<\|[a-z_ ]*\|?>?|\[/?INST\]|<</?SYS>>",
    "filters": r"\b(no|without|bypass\w*|remov\w*|disabl\w*|ignor\w*)\b[^.\n]{0,15}\b(content )?(filters?|filtering|"
               r"censorship)\b",
    "no_rules": r"\b(not|never|no longer)\b[^.\n]{0,20}\b(bound|restricted|limited)\b[^.\n]{0,20}"
                r"\b(by|to)\b[^.\n]{0,30}\b(rules|polic\w+|guidelines|openai|content)\b",
}
_RULE_RX = {name: re.compile(rx, re.IGNORECASE) for name, rx in _RULES.items()}
# persona names are matched case-sensitively ("aim" and "dude" are ordinary words)
_PERSONA_CI = re.compile(r"\b(do anything now|developer mode|jailbr[eo]ak\w*|unfiltered|uncensored|"
                         r"no (ethical|moral)\w* (guidelines|restrictions|limits|boundaries|principles)|"
                         r"without (any )?(restrictions|filters|limits|censorship))\b", re.IGNORECASE)
_PERSONA_CS = re.compile(r"\b(DAN|STAN|DUDE|AIM)\b")


def rule_hits(text: str) -> list[str]:
    hits = [name for name, rx in _RULE_RX.items() if rx.search(text)]
    if _PERSONA_CI.search(text) or _PERSONA_CS.search(text):
        hits.append("persona")
    return hits


# --- the packaged SecureVector Guardian -------------------------------------------------------
THREATS = ("prompt_injection", "jailbreak", "data_exfiltration", "social_engineering", "harmful_content",
           "model_attack", "pii")


@cache
def guardian() -> Any:  # noqa: ANN401 - svguardian's PureGuardian
    """The packaged Guardian, loaded once per process (a failed load is retried on the next call)."""
    from svguardian import resolve_runtime
    from svguardian.model.pure_infer import PureGuardian

    return PureGuardian.load(resolve_runtime())


def guardian_scores(text: str) -> dict[str, Any]:
    """Guardian's verdict: {"risk": 0..1, "threat": type or "benign"}; never raises."""
    try:
        from svguardian.serve import analyze

        result = analyze(text, guardian())
        return {"risk": float(result.get("risk_score", 0)) / 100.0,
                "threat": str(result.get("threat_type") or "benign") if result.get("is_threat") else "benign"}
    except Exception as exc:  # noqa: BLE001 - the guardrail must not fail a question on its own bug
        log.warning("SecureVector Guardian unavailable: %s", exc)
        return {"risk": 0.0, "threat": "benign"}


# --- the learned classifier ---------------------------------------------------------------------
def features(text: str, embedding: np.ndarray) -> np.ndarray:
    """Embedding, Guardian's risk and threat type, and the rule hits: one vector."""
    g = guardian_scores(text)
    hits = rule_hits(text)
    extra = [g["risk"], *[1.0 if g["threat"] == t else 0.0 for t in THREATS],
             *[1.0 if name in hits else 0.0 for name in ("override", "reveal", "persona", "no_rules")]]
    return np.concatenate([np.asarray(embedding, dtype=np.float32), np.asarray(extra, dtype=np.float32)])


@dataclass
class LearnedModel:
    weights: np.ndarray
    bias: float
    threshold: float
    info: dict[str, Any] = field(default_factory=dict)

    def probability(self, x: np.ndarray) -> float:
        return float(1.0 / (1.0 + np.exp(-(float(x @ self.weights) + self.bias))))

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> LearnedModel | None:
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return cls(np.asarray(data["weights"], dtype=np.float32), float(data["bias"]), float(data["threshold"]),
                   data.get("info", {}))


@lru_cache(maxsize=1)
def learned_model() -> LearnedModel | None:
    """Loaded once per process (`learned_model.cache_clear()` reloads)."""
    model = LearnedModel.load()
    if model is None:
        log.warning("guardrail weights missing (%s): rules and Guardian only", WEIGHTS)
    return model


@dataclass
class Verdict:
    blocked: bool
    reason: str
    probability: float | None = None
    rules: list[str] = field(default_factory=list)


def assess(text: str, embedder: Any) -> Verdict:  # noqa: ANN401
    """Rules and the learned classifier (no LLM)."""
    hits = rule_hits(text)
    if hits:
        return Verdict(True, f"rules: {', '.join(hits)}", rules=hits)
    model = learned_model()
    if model is None:
        g = guardian_scores(text)
        blocked = g["threat"] in ("prompt_injection", "jailbreak") and g["risk"] >= 0.9
        return Verdict(blocked, f"guardian: {g['threat']} {g['risk']:.2f}" if blocked else "")
    p = model.probability(features(text, embedder.embed_query(text)))
    blocked = p >= model.threshold
    return Verdict(blocked, f"classifier: p={p:.2f}" if blocked else "", probability=p)


def classifier_embedder(embedder: Any) -> Any:  # noqa: ANN401
    """The classifier was trained on the packaged MiniLM's features: with another retrieval model
    configured (EMBEDDING_MODEL_PATH), its features still come from the packaged one."""
    from providers.embeddings import PACKAGED_NAME, get_embedder

    identity = str(getattr(embedder, "identity", ""))
    return embedder if identity.startswith(f"{PACKAGED_NAME}:384:") else get_embedder()


class GuardReply(BaseModel):
    reason: str = ""
    unsafe: str


@node("guardrail")
def guardrail(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    parts = cfg.running
    question = str(state.get("question") or "").strip()
    out: dict[str, Any] = {"blocked": False, "block_reason": ""}
    verdict = assess(question, classifier_embedder(parts.embedder))
    if not verdict.blocked and cfg.guardrail_llm:
        try:
            messages = [("system", prompts.GUARD_SYSTEM), ("human", question)]
            result = parts.chain(cfg.llm_order).invoke(messages, cheap=True, structured=GuardReply, config=config)
            out["llm_calls"] = llm_call(state, "guardrail", result)
            if str(result.parsed.unsafe).strip().lower().startswith("y"):
                verdict = Verdict(True, f"llm: {result.parsed.reason}"[:200])
        except Exception as exc:  # noqa: BLE001 - the model is an extra signal, not a gate that can fail
            out["llm_calls"] = llm_failed(state, "guardrail", exc)
    if verdict.blocked:
        log.info("guardrail blocked a question (%s)", verdict.reason)
        out.update(blocked=True, block_reason=verdict.reason)
    return out


@node("refuse")
def refuse(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    return {"answer": prompts.REFUSAL, "citations": [], "cited": []}
