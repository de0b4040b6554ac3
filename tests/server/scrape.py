"""Reading a server's /metrics in a test: the sum of one series' samples whose labels match."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families


def sample_sum(text: str, name: str, **labels: str) -> float:
    """The sum of the samples named `name` (e.g. "thotqen_llm_link_attempts_total") with these labels."""
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def scraped(client: httpx.Client, name: str, **labels: str) -> float:
    res = client.get("/metrics")
    assert res.status_code == 200, res.text
    return sample_sum(res.text, name, **labels)
