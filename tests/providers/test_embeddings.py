"""A runtime builds its embedder once, even when the first requests arrive together."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from runtime import build_runtime


def test_concurrent_first_calls_build_one_embedder(settings) -> None:
    runtime = build_runtime(settings.model_copy(update={"embedding_batch_size": 7}))  # nothing built yet
    with ThreadPoolExecutor(max_workers=6) as pool:
        embedders = list(pool.map(lambda _: runtime.embedder, range(6)))
    assert all(e is embedders[0] for e in embedders)
    assert embedders[0].embed_query("revenue").shape == (384,)
