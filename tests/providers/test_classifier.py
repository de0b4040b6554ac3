"""Cheap/complex routing: accuracy floors on the labelled sets, and it costs no model call."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from providers.classifier import classify, explain

DATA = Path(__file__).resolve().parents[2] / "evals" / "data"


@pytest.mark.parametrize("name", ["route_questions.jsonl", "route_questions_holdout.jsonl"])
def test_accuracy_floor(name: str) -> None:
    rows = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
    correct = sum(classify(row["q"]) == row["label"] for row in rows)
    assert correct / len(rows) >= 0.9


def test_obvious_cases_and_signals() -> None:
    assert classify("What was Amazon's net income in FY2019?") == "cheap"
    assert classify("hello") == "cheap"
    label, signals = explain("Compare Walmart's FY2018 and FY2020 operating margin.")
    assert label == "complex" and {"compare", "metric", "several periods"} <= set(signals)
    assert classify("Why did costs rise?") == "complex"
    assert classify("How much inventory did Best Buy hold?") == "cheap"  # a name, not a superlative
    assert classify("Which segment had the best year?") == "complex"


def test_it_is_fast() -> None:
    started = time.thread_time()  # CPU time: a busy machine lengthens the wall time, not this
    for _ in range(1000):
        classify("What is the FY2019 - FY2021 average operating margin for Corning? Round to one decimal.")
    assert (time.thread_time() - started) / 1000 < 0.001
