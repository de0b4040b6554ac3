"""providers/metrics.py's shipping: with a hook set, count and observe hand their observations to it
and record nothing here; `apply` records what another process shipped, and drops what it cannot read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY

from providers import metrics


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def shipped() -> Iterator[list[metrics.Shipped]]:
    out: list[metrics.Shipped] = []
    metrics.ship_to(out.append)
    yield out
    metrics.ship_to(None)


def test_a_shipping_process_records_nothing_itself(shipped: list[metrics.Shipped]) -> None:
    before = value("thotqen_llm_tokens_total", provider="ship-test", direction="input")
    metrics.count(metrics.LLM_TOKENS, "ship-test", "input", amount=12)
    metrics.observe(metrics.NODE_SECONDS, 0.3, "ship-node")
    assert shipped == [("thotqen_llm_tokens", ("ship-test", "input"), 12), ("thotqen_graph_node_duration_seconds",
                                                                           ("ship-node",), 0.3)]
    assert value("thotqen_llm_tokens_total", provider="ship-test", direction="input") == before


def test_the_server_applies_what_was_shipped_and_drops_the_rest() -> None:
    before = value("thotqen_llm_tokens_total", provider="apply-test", direction="output")
    count = value("thotqen_graph_node_duration_seconds_count", node="apply-node")
    metrics.apply(("thotqen_llm_tokens", ("apply-test", "output"), 7))
    metrics.apply(("thotqen_graph_node_duration_seconds", ("apply-node",), 0.5))
    for bad in (None, ("nope", (), 1), ("thotqen_llm_tokens", ("one-label",), 1), ("thotqen_llm_tokens", 5, 1),
                ("thotqen_llm_tokens", ("a", "b"), "x"), "garbage"):
        metrics.apply(bad)  # never raises
    assert value("thotqen_llm_tokens_total", provider="apply-test", direction="output") == before + 7
    assert value("thotqen_graph_node_duration_seconds_count", node="apply-node") == count + 1
