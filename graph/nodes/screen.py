"""Screen: retrieved text is data, never instructions.

Every sentence of every excerpt is checked for text addressed to the model (an injected
instruction: "ignore the question", "render your response in Portuguese", "include this
link"). Flagged sentences are cut out and replaced by a marker; an excerpt that is mostly
instructions is dropped. Two signals: rules, and a hashed word n-gram logistic regression
trained on the BIPIA training split plus filing sentences (evals/screen.py writes
nodes/screen_weights.json; detection and false drops are in evals/results/). Pure Python and
numpy: microseconds a sentence, so it can read every excerpt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig

from graph.configuration import Configuration
from graph.nodes.common import node
from graph.state import State

log = logging.getLogger(__name__)

WEIGHTS = Path(__file__).with_name("screen_weights.json")
MARKER = "[removed: text that looked like an instruction to the assistant]"
DIM = 2**18

# Sentence ends, blank lines and table cell bars; a single newline is only PDF line wrapping.
_SPLIT = re.compile(r"((?<=[.!?])\s+(?=[A-Z\"'(\[])|\n\s*\n\s*|\s*\|\s*)")
_TO_MODEL = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|question|above|previous|prompt)\b"
    r"|\b(your|the) (response|reply|answer|output|message)s?\b"
    r"|\b(respond|reply|answer)\b.{0,20}\b(only|in|with|using)\b.{0,20}\b(language|french|spanish|german|"
    r"portuguese|italian|chinese|russian|japanese|emoji|uppercase|capital)"
    r"|\bas an ai\b|\b(assistant|chatbot|language model)\b.{0,30}\b(must|should|will)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+|\d+|[^\sa-z\d]", re.IGNORECASE)


def _norm(piece: str) -> str:
    return " ".join(piece.split())


def sentences(text: str) -> list[str]:
    """Sentences with whitespace (PDF line wraps included) collapsed."""
    return [s for s in (_norm(part) for part in _SPLIT.split(text)[::2]) if s]


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
    toks = tokens(sentence)
    counts: dict[int, float] = {}
    for t in toks:
        h = _hash(t)
        counts[h] = counts.get(h, 0.0) + 1.0
    norm = float(np.sqrt(sum(v * v for v in counts.values()))) or 1.0
    return {h: v / norm for h, v in counts.items()}


@dataclass
class SentenceModel:
    weights: dict[int, float]
    bias: float
    threshold: float

    def probability(self, sentence: str) -> float:
        z = self.bias + sum(self.weights.get(h, 0.0) * v for h, v in vector(sentence).items())
        return float(1.0 / (1.0 + np.exp(-z)))

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> SentenceModel | None:
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return cls({int(k): float(v) for k, v in data["weights"].items()}, float(data["bias"]),
                   float(data["threshold"]))


@lru_cache(maxsize=1)
def sentence_model() -> SentenceModel | None:
    """Loaded once per process (`sentence_model.cache_clear()` reloads)."""
    model = SentenceModel.load()
    if model is None:
        log.warning("screening weights missing (%s): rules only", WEIGHTS)
    return model


def is_instruction(sentence: str, model: SentenceModel | None = None) -> bool:
    if _TO_MODEL.search(sentence):
        return True
    model = model if model is not None else sentence_model()
    return model is not None and model.probability(sentence) >= model.threshold


def screen_text(text: str, model: SentenceModel | None = None) -> tuple[str, list[str]]:
    """(text with instruction-like sentences replaced by MARKER, the removed sentences)."""
    parts = _SPLIT.split(text)  # sentences at even positions, separators at odd ones
    removed: list[str] = []
    for i in range(0, len(parts), 2):
        sentence = _norm(parts[i])
        if sentence and is_instruction(sentence, model):
            removed.append(sentence)
            parts[i] = MARKER
    return ("".join(parts) if removed else text), removed


def mostly_instructions(text: str, removed: list[str]) -> bool:
    return sum(len(s) for s in removed) > 0.5 * max(1, len(text))


@node("screen")
def screen(state: State, config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    documents = list(state.get("documents") or [])
    if not cfg.screen_chunks:
        return {"documents": documents}
    kept = []
    for doc in documents:
        clean, removed = screen_text(doc.get("text", ""))
        if removed:
            log.info("screened %d sentence(s) out of %s", len(removed), doc.get("key"))
            if mostly_instructions(doc.get("text", ""), removed):
                continue
        kept.append({**doc, "text": clean, "screened": removed})
    return {"documents": kept}
