"""Screen: retrieved text is data, never instructions.

Every sentence of every excerpt is checked for text addressed to the model (an injected
instruction: "ignore the question", "render your response in Portuguese", "include this
link"). Flagged sentences are cut out and replaced by a marker; when a flagged "sentence" is
really several PDF lines or clauses run together, only the flagged ones go (unless what would
stay still reads as an instruction). The rest of the excerpt, its facts, stays: an excerpt is
dropped only when nothing of substance is left. Two signals: rules, and a hashed word n-gram logistic regression
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
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.state import State

log = logging.getLogger(__name__)

WEIGHTS = Path(__file__).with_name("screen_weights.json")
MARKER = "[removed: text that looked like an instruction to the assistant]"
DIM = 2**18

# Sentence ends, blank lines and table cell bars; a single newline is only PDF line wrapping.
_SPLIT = re.compile(r"((?<=[.!?])\s+(?=[A-Z\"'(\[])|\n\s*\n\s*|\s*\|\s*)")
# Inside a flagged sentence: its lines and clauses, so an injected line can go alone.
_FINE = re.compile(r"(\s*\n\s*|(?<=[.!?:;])\s+)")
_SUBSTANCE = re.compile(r"[A-Za-z0-9]")
MIN_LEFT = 40  # letters and digits an excerpt must keep, once screened, to be worth showing
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


def _lines(sentence: str) -> list[list[int]]:
    """The sentence's lines and clauses as groups of piece indices (even positions of _FINE.split): a
    piece that starts in lower case after one that does not end a sentence continues it (a wrapped line)."""
    pieces = _FINE.split(sentence)
    groups: list[list[int]] = []
    for i in range(0, len(pieces), 2):
        text = _norm(pieces[i])
        if not text:
            continue
        previous = _norm(pieces[groups[-1][-1]]) if groups else ""
        if groups and text[0].islower() and not previous.endswith((".", "!", "?")):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _cut(sentence: str, flagged_whole: bool, model: SentenceModel | None) -> tuple[str, list[str]]:
    """The sentence with its instruction lines replaced by MARKER when the rest is clean; the whole
    sentence replaced when it is flagged and cannot be split so; unchanged otherwise."""
    pieces = _FINE.split(sentence)
    groups = _lines(sentence)
    if len(groups) > 1:
        texts = [" ".join(_norm(pieces[i]) for i in g) for g in groups]
        flagged = [n for n, t in enumerate(texts) if is_instruction(t, model)]
        rest = " ".join(t for n, t in enumerate(texts) if n not in flagged)
        if flagged and rest and not is_instruction(rest, model):
            for n in flagged:
                first, *others = groups[n]
                pieces[first] = MARKER
                for i in others:  # the group's other pieces and the separators inside it go too
                    pieces[i - 1] = pieces[i] = ""
            return "".join(pieces), [texts[n] for n in flagged]
    return (MARKER, [_norm(sentence)]) if flagged_whole else (sentence, [])


def screen_text(text: str, model: SentenceModel | None = None) -> tuple[str, list[str]]:
    """(text with instruction-like sentences, or lines of them, replaced by MARKER, the removed text)."""
    parts = _SPLIT.split(text)  # sentences at even positions, separators at odd ones
    removed: list[str] = []
    for i in range(0, len(parts), 2):
        sentence = _norm(parts[i])
        if sentence:
            parts[i], cut = _cut(parts[i], is_instruction(sentence, model), model)
            removed += cut
    return ("".join(parts) if removed else text), removed


def nothing_left(clean: str) -> bool:
    """True when a screened excerpt holds too little besides markers to be worth showing."""
    return len(_SUBSTANCE.findall(clean.replace(MARKER, ""))) < MIN_LEFT


def screen_excerpt(text: str, model: SentenceModel | None = None) -> tuple[str | None, list[str]]:
    """(the excerpt as the model will see it, or None when it is dropped; the removed text)."""
    clean, removed = screen_text(text, model)
    return (None if removed and nothing_left(clean) else clean), removed


@node("screen")
def screen(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    documents = list(state.get("documents") or [])
    if not cfg.screen_chunks:
        return {"documents": documents}
    kept = []
    for doc in documents:
        clean, removed = screen_excerpt(doc.get("text", ""))
        if removed:
            log.info("screened %d sentence(s) out of %s%s", len(removed), doc.get("key"),
                     "" if clean is not None else " (nothing else left: dropped)")
        if clean is not None:
            kept.append({**doc, "text": clean, "screened": removed})
    return {"documents": kept}
