"""The ONNX Runtime backends: exported once from the packaged weights, checked against PyTorch."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from providers.embeddings import Embedder, build_embedder, packaged_model_path
from providers.onnx_embedder import DISABLED_FUSIONS, FILES, ensure_exported, open_session, verify

TEXTS = [
    "Capital expenditures were $1,577 million in 2018, up from $1,373 million.",
    "Consolidated Statements of Cash Flows\nNet cash provided by operating activities 6,439",
    "The Company's board of directors declared a quarterly dividend of $1.36 per share.",
    "Risk factors: hurricanes damaged two warehouses in Texas during the third quarter, and "
    "insurance recoveries are expected next year. " * 8,  # longer than 256 word pieces: truncated
    "ok",
]


@pytest.fixture(scope="module")
def torch_embedder():
    return build_embedder("torch")


def test_export_once_then_reuse_and_redo_when_tampered(tmp_path: Path) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # the export never reaches a hub
    directory = ensure_exported(tmp_path, packaged_model_path())
    manifest = json.loads((directory / "manifest.json").read_text())
    assert set(manifest["files"]) == {*FILES.values(), "tokenizer.json"}
    assert verify(directory) == []
    mtime = (directory / FILES["onnx-int8"]).stat().st_mtime_ns
    assert ensure_exported(tmp_path, packaged_model_path()) == directory
    assert (directory / FILES["onnx-int8"]).stat().st_mtime_ns == mtime  # not exported again

    with (directory / FILES["onnx-int8"]).open("ab") as fh:  # damaged on disk
        fh.write(b"x")
    assert verify(directory) == [FILES["onnx-int8"]]
    ensure_exported(tmp_path, packaged_model_path())
    assert verify(directory) == []


def test_onnx_matches_torch(torch_embedder, embedder, settings) -> None:
    fp32 = build_embedder("onnx", export_root=settings.embedding_export_root)
    int8 = build_embedder("onnx-int8", export_root=settings.embedding_export_root)
    # same tokenizer: chunk boundaries do not depend on the backend
    assert fp32.count_tokens(TEXTS) == int8.count_tokens(TEXTS) == torch_embedder.count_tokens(TEXTS)
    ref = torch_embedder.embed_documents(TEXTS)
    # int8: 0.99 on real chunks (evals/results/embed_backends.md), lower on a two-letter text
    for other, floor in ((fp32, 0.9999), (int8, 0.95)):
        vecs = other.embed_documents(TEXTS)
        assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        assert (vecs * ref).sum(axis=1).min() > floor, other.backend
        query = other.embed_query(TEXTS[0])
        assert float(query @ torch_embedder.embed_query(TEXTS[0])) > floor
        # a query alone and in a batch give the same vector
        assert float(query @ vecs[0]) > 0.9999
    assert [e.identity for e in (torch_embedder, fp32, int8)] == [
        "all-MiniLM-L6-v2:384:torch", "all-MiniLM-L6-v2:384:onnx", "all-MiniLM-L6-v2:384:onnx-int8"]


def test_default_backend_is_the_setting(runtime, embedder, settings) -> None:
    assert embedder.backend == settings.embedding.backend == "onnx-int8"
    assert runtime.embedder is runtime.embedder is embedder


def test_batches_follow_token_length() -> None:
    base = Embedder(packaged_model_path(), batch_size=3)
    base.batch_tokens = 600
    counts = [300, 5, 250, 6, 7, 120, 8]
    batches = base.batches(counts)
    flat = [i for batch in batches for i in batch]
    lengths = [min(n + 2, base.max_tokens) for n in counts]
    assert sorted(flat) == list(range(len(counts)))
    assert [lengths[i] for i in flat] == sorted(lengths)  # shortest first: little padding per batch
    # widths 7 8 9 | 10 122 | 252 256: three short texts (the cap), then two per batch (3 x 252 > 600)
    assert [len(b) for b in batches] == [3, 2, 2]
    for batch in batches:
        assert len(batch) <= base.batch_size
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= base.batch_tokens


def test_onnx_embeds_each_text_alone(embedder) -> None:
    # int8 activations are scaled per input: batching would make a vector depend on its neighbours
    assert embedder.batches([5, 6, 7]) == [[0], [1], [2]]
    vecs = embedder.embed_documents(TEXTS[:3])
    assert float(vecs[1] @ embedder.embed_documents([TEXTS[1]])[0]) > 0.99999


def test_documents_run_in_parallel_in_input_order(embedder) -> None:
    # workers take the longest texts first; every vector lands back at its text's index
    seen: list[tuple[int, int]] = []
    vecs = embedder.embed_documents(TEXTS, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(n, len(TEXTS)) for n in range(1, len(TEXTS) + 1)]
    for text, vec in zip(TEXTS, vecs, strict=True):
        assert float(vec @ embedder.embed_documents([text])[0]) > 0.99999
    assert embedder.embed_documents([]).shape == (0, embedder.dimension)


def test_the_slow_fusions_stay_apart(embedder, tmp_path) -> None:
    import onnx

    # onnxruntime accepts an unknown name in disabled_optimizers silently: check the graph it runs
    assert DISABLED_FUSIONS == ("SkipLayerNormFusion", "BiasGeluFusion")
    for name in FILES.values():
        open_session(embedder.directory / name, optimized_to=tmp_path / name)
        ops = {n.op_type for n in onnx.load(str(tmp_path / name)).graph.node}
        assert not ops & {"SkipLayerNormalization", "BiasGelu", "SkipSimplifiedLayerNormalization"}, name
        assert {"LayerNormalization", "Gelu"} <= ops, name
        assert ops & {"Attention", "QAttention"}, name


def test_unknown_backend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown embedding backend"):
        build_embedder("tensorflow")


def test_a_model_the_export_does_not_cover_is_refused(model_128) -> None:
    from providers.onnx_embedder import ExportError, check_supported

    check_supported(Path(packaged_model_path()))  # Transformer, mean Pooling, Normalize
    with pytest.raises(ExportError, match="EMBEDDING_BACKEND=torch"):
        check_supported(Path(model_128))  # a Dense projection after pooling
