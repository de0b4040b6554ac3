"""The screen's classifier: is a sentence of retrieved text addressed to the model?

An injected instruction ("ignore the question", "render your response in Portuguese", "include
this link") is caught by rules, or by a hashed word n-gram logistic regression trained on the
BIPIA training split plus filing sentences (evals/screen.py writes instruction_weights.json;
detection and false drops are in evals/results/screen.md). Pure Python and numpy: microseconds a
sentence, so the screen can read every excerpt. Without the weights file: rules only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_WEIGHTS = Path(__file__).with_name("instruction_weights.json")
DIM = 2**18  # hashed feature space; the weights file's keys are indices into it

_TO_MODEL = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|question|above|previous|prompt)\b"
    r"|\b(your|the) (response|reply|answer|output|message)s?\b"
    r"|\b(respond|reply|answer)\b.{0,20}\b(only|in|with|using)\b.{0,20}\b(language|french|spanish|german|"
    r"portuguese|italian|chinese|russian|japanese|emoji|uppercase|capital)"
    r"|\bas an ai\b|\b(assistant|chatbot|language model)\b.{0,30}\b(must|should|will)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+|\d+|[^\sa-z\d]", re.IGNORECASE)


def rule_hit(sentence: str) -> bool:
    """True when a rule says the sentence speaks to the model (rules always cut)."""
    return _TO_MODEL.search(sentence) is not None


def _hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little") % DIM


def tokens(sentence: str) -> list[str]:
    """Lowercased words and bigrams, plus the first word marked (imperatives start sentences)."""
    words = [w.lower() for w in _WORD.findall(sentence)]
    out = [f"w:{w}" for w in words] + [f"b:{a}_{b}" for a, b in zip(words, words[1:], strict=False)]
    if words:
        out.append(f"first:{words[0]}")
    if sentence.rstrip().endswith("?"):
        out.append("is:question")
    return out


def vector(sentence: str) -> dict[int, float]:
    """The sentence's hashed token counts, L2-normalised: {index < DIM: value}."""
    counts: dict[int, float] = {}
    for t in tokens(sentence):
        h = _hash(t)
        counts[h] = counts.get(h, 0.0) + 1.0
    norm = float(np.sqrt(sum(v * v for v in counts.values()))) or 1.0
    return {h: v / norm for h, v in counts.items()}


@dataclass
class SentenceModel:
    """Logistic regression over `vector`; weights are sparse (pruned ones are absent)."""

    weights: dict[int, float]
    bias: float
    threshold: float

    def probability(self, sentence: str) -> float:
        z = self.bias + sum(self.weights.get(h, 0.0) * v for h, v in vector(sentence).items())
        return float(1.0 / (1.0 + np.exp(-z)))

    @classmethod
    def read(cls, path: Path) -> SentenceModel:
        data = json.loads(path.read_text())
        return cls({int(k): float(v) for k, v in data["weights"].items()}, float(data["bias"]),
                   float(data["threshold"]))


class InstructionClassifier:
    """Rules, then the learned model when its weights are there."""

    def __init__(self, model: SentenceModel | None) -> None:
        self.model = model

    @classmethod
    def load(cls, path: Path = DEFAULT_WEIGHTS) -> InstructionClassifier:
        """The weights at `path`; without them, rules only (logged)."""
        if not path.is_file():
            log.warning("screening weights missing (%s): rules only", path)
            return cls(None)
        return cls(SentenceModel.read(path))

    def is_instruction(self, sentence: str) -> bool:
        if rule_hit(sentence):
            return True
        return self.model is not None and self.model.probability(sentence) >= self.model.threshold
