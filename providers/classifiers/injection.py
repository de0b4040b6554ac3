"""The guardrail's classifier: is a message to the assistant prompt injection or a jailbreak?

Rules first (phrases only attacks use); then a logistic regression over the MiniLM embedding
of the message, the packaged SecureVector Guardian's scores and the rule hits, trained on the
jailbreak training split (evals/guardrail.py writes injection_weights.json; measured in
evals/results/guardrail.md). Without the weights file: rules and the Guardian alone.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from providers.embeddings import PACKAGED_NAME

log = logging.getLogger(__name__)

DEFAULT_WEIGHTS = Path(__file__).with_name("injection_weights.json")

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

# the Guardian's threat types, one-hot in the features (their order is the weights' order)
THREATS = ("prompt_injection", "jailbreak", "data_exfiltration", "social_engineering", "harmful_content",
           "model_attack", "pii")
# the rule hits that are features (the others block on their own and never reach the model)
FEATURE_RULES = ("override", "reveal", "persona", "no_rules")


def rule_hits(text: str) -> list[str]:
    hits = [name for name, rx in _RULE_RX.items() if rx.search(text)]
    if _PERSONA_CI.search(text) or _PERSONA_CS.search(text):
        hits.append("persona")
    return hits


class Embedder(Protocol):
    def embed_query(self, text: str) -> Any: ...  # a vector (list or numpy array)


class Guardian:
    """The packaged SecureVector Guardian, loaded on first use (a failed load is retried on the next call).

    One load at a time: it is a second of the interpreter lock (decompressing and decoding its JSON),
    and every question that arrived before the first load ended started its own, which held up every
    other request of the server (evals/results/burst.md). The server loads it at start-up (server.py)."""

    def __init__(self) -> None:
        self._model: Any = None
        self._loading = threading.Lock()
        self.loads = 0  # how many times the model was read (one, unless a load failed)

    def _loaded(self) -> Any:  # svguardian's PureGuardian
        if self._model is not None:
            return self._model
        with self._loading:
            if self._model is None:
                # svguardian is heavy to import: only when the guardrail first runs
                from svguardian import resolve_runtime
                from svguardian.model.pure_infer import PureGuardian

                self.loads += 1
                self._model = PureGuardian.load(resolve_runtime())
        return self._model

    def scores(self, text: str) -> dict[str, Any]:
        """The Guardian's verdict: {"risk": 0..1, "threat": type or "benign"}; never raises."""
        try:
            from svguardian.serve import analyze  # heavy, as above

            result = analyze(text, self._loaded())
            return {"risk": float(result.get("risk_score", 0)) / 100.0,
                    "threat": str(result.get("threat_type") or "benign") if result.get("is_threat") else "benign"}
        except Exception as exc:  # the guardrail must not fail a question on its own bug
            log.warning("SecureVector Guardian unavailable: %s", exc)
            return {"risk": 0.0, "threat": "benign"}


@dataclass
class LearnedModel:
    """Logistic regression over InjectionClassifier.features."""

    weights: np.ndarray
    bias: float
    threshold: float
    info: dict[str, Any] = field(default_factory=dict)

    def probability(self, x: np.ndarray) -> float:
        return float(1.0 / (1.0 + np.exp(-(float(x @ self.weights) + self.bias))))

    @classmethod
    def read(cls, path: Path) -> LearnedModel:
        data = json.loads(path.read_text())
        return cls(np.asarray(data["weights"], dtype=np.float32), float(data["bias"]), float(data["threshold"]),
                   data.get("info", {}))


@dataclass
class Verdict:
    blocked: bool
    reason: str
    probability: float | None = None
    rules: list[str] = field(default_factory=list)


class InjectionClassifier:
    """Rules, then the learned model (or, without weights, the Guardian alone). No LLM."""

    def __init__(self, model: LearnedModel | None, guardian: Guardian | None = None) -> None:
        self.model = model
        self.guardian = guardian if guardian is not None else Guardian()

    @classmethod
    def load(cls, path: Path = DEFAULT_WEIGHTS) -> InjectionClassifier:
        """The weights at `path`; without them, rules and the Guardian only (logged)."""
        if not path.is_file():
            log.warning("guardrail weights missing (%s): rules and Guardian only", path)
            return cls(None)
        return cls(LearnedModel.read(path))

    def features(self, text: str, embedding: np.ndarray) -> np.ndarray:
        """Embedding, the Guardian's risk and threat type, and the rule hits: one vector."""
        g = self.guardian.scores(text)
        hits = rule_hits(text)
        extra = [g["risk"], *[1.0 if g["threat"] == t else 0.0 for t in THREATS],
                 *[1.0 if name in hits else 0.0 for name in FEATURE_RULES]]
        return np.concatenate([np.asarray(embedding, dtype=np.float32), np.asarray(extra, dtype=np.float32)])

    def assess(self, text: str, embedder: Embedder) -> Verdict:
        """The verdict on `text`; `embedder` gives its features (see gives_trained_features)."""
        hits = rule_hits(text)
        if hits:
            return Verdict(True, f"rules: {', '.join(hits)}", rules=hits)
        if self.model is None:
            g = self.guardian.scores(text)
            blocked = g["threat"] in ("prompt_injection", "jailbreak") and g["risk"] >= 0.9
            return Verdict(blocked, f"guardian: {g['threat']} {g['risk']:.2f}" if blocked else "")
        p = self.model.probability(self.features(text, embedder.embed_query(text)))
        blocked = p >= self.model.threshold
        return Verdict(blocked, f"classifier: p={p:.2f}" if blocked else "", probability=p)


def gives_trained_features(embedder: Embedder) -> bool:
    """The classifier was trained on the packaged MiniLM's features: with another retrieval model
    configured (EMBEDDING_MODEL_PATH), runtime.py gives it the packaged one as well."""
    return str(getattr(embedder, "identity", "")).startswith(f"{PACKAGED_NAME}:384:")
