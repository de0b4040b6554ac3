"""burst.py's latency percentiles are scoring.percentile's linear ones, to one place (a module apart:
importing burst loads PyMuPDF, which the unit tier refuses)."""

from __future__ import annotations

import random
import statistics

from evals import burst


def test_burst_percentile_reads_as_before() -> None:
    draw = random.Random(7)
    for n in (2, 5, 40):
        values = [round(draw.uniform(1, 900), 2) for _ in range(n)]
        for q in (50, 95):
            assert burst.pct(values, q) == round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1)
    assert burst.pct([812.54], 95) == 812.5  # one sample is every percentile of itself
    assert burst.pct([], 95) == 0.0
