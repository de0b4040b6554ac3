"""Rerankers: the FlagEmbedding path on a tiny locally built cross-encoder, fallbacks, dense."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

import providers.reranker as rr
from runtime import build_runtime
from tests.support.settings import make_settings

WORDS = ["revenue", "capital", "expenditure", "was", "in", "the", "of", "2018", "million", "employees",
         "headquarters", "what", "is", "?", ".", "$", ",", "1", "577"]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT with a 1-logit head and a 24-word vocabulary, saved like a hub model."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny-reranker")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).eval().save_pretrained(path)
    return path


def test_bge_path_scores_like_the_cross_encoder_itself(tiny_cross_encoder: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    query = "what was the capital expenditure in 2018 ?"
    texts = ["capital expenditure was $ 1,577 million in 2018 .", "the headquarters of the employees ."]
    reranker = rr.BGEReranker(str(tiny_cross_encoder))
    scores = reranker.rerank(query, texts)

    tok = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    with torch.no_grad():
        batch = tok([query] * 2, texts, padding=True, truncation=True, return_tensors="pt")
        expected = torch.sigmoid(model(**batch).logits.view(-1)).tolist()
    assert scores == pytest.approx(expected, abs=1e-5)
    assert reranker.rerank(query, []) == []


def test_auto_uses_bge_when_the_weights_are_there(tiny_cross_encoder: Path) -> None:
    settings = make_settings(reranker="auto", reranker_model=str(tiny_cross_encoder))
    assert build_runtime(settings).reranker().name == "bge"


def test_auto_without_weights_says_so_once_and_falls_back(caplog) -> None:
    settings = make_settings(reranker="auto", reranker_model="BAAI/not-in-any-cache", reranker_fallback="none")
    runtime = build_runtime(settings)
    with caplog.at_level(logging.WARNING, logger="providers.reranker"):
        first = runtime.reranker()
        second = runtime.reranker()
    assert first is second and first.name == "none"
    assert sum("weights not found" in r.message for r in caplog.records) == 1
    assert first.rerank("q", ["a", "b", "c"]) == [1.0, 0.5, pytest.approx(1 / 3)]
    with pytest.raises(ValueError, match="unknown reranker"):
        rr.build_reranker("colbert", model=settings.reranking.model)


def test_dense_reranker_prefers_the_relevant_passage(runtime) -> None:
    scores = rr.DenseReranker(runtime.packaged_embedder).rerank(
        "What was 3M's capital expenditure in 2018?",
        ["The weather in Paris was mild and sunny in spring.",
         "3M's capital expenditures were $1,577 million in 2018."],
    )
    assert scores[1] > scores[0]
