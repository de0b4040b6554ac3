"""The embedder is built once per process, even when the first requests arrive together."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from providers.embeddings import get_embedder


def test_concurrent_first_calls_build_one_embedder() -> None:
    # a batch size no other test uses, so this configuration is not cached yet
    with ThreadPoolExecutor(max_workers=6) as pool:
        embedders = list(pool.map(lambda _: get_embedder(None, 7), range(6)))
    assert all(e is embedders[0] for e in embedders)
    assert embedders[0].embed_query("revenue").shape == (384,)
