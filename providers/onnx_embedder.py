"""MiniLM through ONNX Runtime: exported once from the packaged weights, never downloaded.

`ensure_exported(root, model_path)` exports the sentence-transformers model's transformer to
`<root>/<name>-<weights sha256[:12]>/model.onnx` (root: `<THOTQEN_HOME>/models/embeddings`, or
EMBEDDING_EXPORT_DIR) with torch (already installed for the PyTorch backend), fuses its attention
and layer norms into onnxruntime's BERT kernels, then writes an int8 dynamically quantized copy (`model_int8.onnx`,
onnxruntime's quantizer). A manifest records the source weights' sha256 and each file's sha256;
later starts compare sizes and mtimes with it (re-hashing 110 MB would cost every cold start) and
re-export anything that does not match. The export runs under a file lock so that server workers
starting together export once.

At run time only onnxruntime, `tokenizers` and numpy are loaded (no torch import: a cold
`thotqen ask` saves seconds). Pooling (mean over the attention mask) and L2 normalisation follow
the model's sentence-transformers modules; tests/providers/test_onnx_embedder.py checks the
vectors against the PyTorch backend.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from providers.embeddings import BatchProgress, Embedder

log = logging.getLogger(__name__)

# Bump when the export recipe changes: old exports are then re-made, not trusted.
# 3: no SkipLayerNormalization or BiasGelu fusion (see DISABLED_FUSIONS).
EXPORT_VERSION = 3
OPSET = 17
FILES = {"onnx": "model.onnx", "onnx-int8": "model_int8.onnx"}
# onnxruntime's CPU kernels for these two fusions ran slower than the ops they replace; without them
# the bias adds fold into the matrix multiplies instead, which costs less CPU per int8 chunk at the
# same cosine to torch (evals/results/onnx_fusions.md). Neither the export nor the session's own
# optimizer may make them.
DISABLED_FUSIONS = ("SkipLayerNormFusion", "BiasGeluFusion")


class Encoding(Protocol):
    """What the embedder reads of a `tokenizers` Encoding (the package ships no py.typed)."""

    @property
    def ids(self) -> list[int]: ...


class Session(Protocol):
    """What the embedder calls on an onnxruntime InferenceSession (onnxruntime ships no types)."""

    def run(self, output_names: list[str] | None, input_feed: dict[str, np.ndarray]) -> list[np.ndarray]: ...

    def get_inputs(self) -> list[Any]: ...


class ExportError(RuntimeError):
    """The ONNX export could not be made or verified."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _weights_file(model_path: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_path / name).is_file():
            return model_path / name
    raise ExportError(f"no model.safetensors or pytorch_model.bin under {model_path}")


def _stamp(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _source_dir_name(model_path: Path, weights: Path) -> tuple[str, str]:
    """(directory name, source sha256). The sha256 of 90 MB is cached next to the manifests by
    the weights' size and mtime, so only the first start pays for it."""
    base = model_path.name if model_path.name != "model" else model_path.parent.name
    cache = weights.with_name(weights.name + ".thotqen-sha256")
    stamp = _stamp(weights)
    try:
        cached = json.loads(cache.read_text())
        if cached.get("stamp") == stamp:
            return f"{base}-{cached['sha256'][:12]}", cached["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    sha = _sha256(weights)
    with contextlib.suppress(OSError):  # a read-only site-packages only costs a re-hash next time
        cache.write_text(json.dumps({"stamp": stamp, "sha256": sha}))
    return f"{base}-{sha[:12]}", sha


def export_dir(root: Path, model_path: str | Path) -> Path:
    model_path = Path(model_path)
    name, _sha = _source_dir_name(model_path, _weights_file(model_path))
    return Path(root) / name


def _manifest_ok(directory: Path, source_sha: str) -> bool:
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("export_version") != EXPORT_VERSION or manifest.get("source_sha256") != source_sha:
        return False
    for fname in (*FILES.values(), "tokenizer.json"):
        entry = manifest.get("files", {}).get(fname)
        path = directory / fname
        if not entry or not path.is_file() or _stamp(path) != entry["stamp"]:
            return False
    return True


def verify(directory: Path) -> list[str]:
    """Re-hash every exported file against the manifest; the names that do not match (doctor)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    return [name for name, entry in manifest["files"].items()
            if not (directory / name).is_file() or _sha256(directory / name) != entry["sha256"]]


class _DropQuantizerAdvice(logging.Filter):
    """The quantizer advises pre-processing on the root logger; that step is for static quantization."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def _export(model_path: Path, directory: Path, source_sha: str) -> None:
    import shutil
    import warnings

    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel

    started = time.perf_counter()
    tmp = directory.with_name(directory.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(2, 16, dtype=torch.long) for _ in names)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        # dynamo=False: the TorchScript exporter needs no onnxscript and handles BERT's dynamic axes
        torch.onnx.export(
            model, dummy, str(tmp / FILES["onnx"]), input_names=names, output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
            opset_version=OPSET, dynamo=False,
        )
    # Fuse attention, layer norms and GELU into onnxruntime's BERT kernels (same numbers, fewer ops),
    # except those of DISABLED_FUSIONS.
    raw = tmp / "raw.onnx"
    (tmp / FILES["onnx"]).rename(raw)
    config = model.config
    fusions = FusionOptions("bert")
    fusions.enable_skip_layer_norm = False
    fusions.enable_bias_gelu = False
    optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                   hidden_size=config.hidden_size, opt_level=1,
                   optimization_options=fusions).save_model_to_file(str(tmp / FILES["onnx"]))
    raw.unlink()
    # int8 weights, one scale per output channel (one scale per tensor moved the vectors away from
    # PyTorch's; per channel keeps them close: evals/results/README.md, "Embedding backends"),
    # activations quantized on the fly.
    root_logger = logging.getLogger()
    quiet = _DropQuantizerAdvice()
    root_logger.addFilter(quiet)
    try:
        quantize_dynamic(str(tmp / FILES["onnx"]), str(tmp / FILES["onnx-int8"]), weight_type=QuantType.QInt8,
                         per_channel=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root_logger.removeFilter(quiet)
    shutil.copyfile(model_path / "tokenizer.json", tmp / "tokenizer.json")
    files: dict[str, dict[str, object]] = {
        name: {"sha256": _sha256(tmp / name)} for name in (*FILES.values(), "tokenizer.json")}
    manifest = {"export_version": EXPORT_VERSION, "source": str(model_path), "source_sha256": source_sha,
                "opset": OPSET, "torch": torch.__version__, "files": files}
    shutil.rmtree(directory, ignore_errors=True)
    tmp.rename(directory)  # whole directory or nothing under the real name
    for name in files:  # stamps after the rename: the checks compare these
        files[name]["stamp"] = _stamp(directory / name)
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2))
    log.info("exported %s to ONNX in %.1f s", model_path, time.perf_counter() - started)


def ensure_exported(root: Path, model_path: str | Path) -> Path:
    """The directory holding model.onnx, model_int8.onnx and tokenizer.json; exported if missing
    or stale (idempotent; concurrent callers wait for one export)."""
    model_path = Path(model_path)
    weights = _weights_file(model_path)
    name, source_sha = _source_dir_name(model_path, weights)
    directory = Path(root) / name
    if _manifest_ok(directory, source_sha):
        return directory
    with _locked(directory.with_name(directory.name + ".lock")):
        if not _manifest_ok(directory, source_sha):  # another process may have finished meanwhile
            log.warning("exporting the embedding model to ONNX under %s (once)", directory)
            try:
                _export(model_path, directory, source_sha)
            except ExportError:
                raise
            except Exception as exc:
                raise ExportError(f"ONNX export of {model_path} failed: {exc}") from exc
    return directory


SUPPORTED_MODULES = {"Transformer", "Pooling", "Normalize"}  # class names; their module paths vary by version


def check_supported(model_path: Path) -> None:
    """The export covers a transformer, mean pooling and normalisation: refuse anything else (a Dense
    projection, CLS pooling) clearly instead of making other vectors."""
    try:
        modules = json.loads((model_path / "modules.json").read_text())
        pooling = json.loads((model_path / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ExportError(f"{model_path} is not a sentence-transformers folder the ONNX backend can export: {exc}"
                          ) from exc
    others = sorted({str(m.get("type", "?")).rsplit(".", 1)[-1] for m in modules} - SUPPORTED_MODULES)
    if others or not pooling.get("pooling_mode_mean_tokens") or pooling.get("pooling_mode_cls_token"):
        raise ExportError(f"the ONNX backends export mean-pooled transformer models only; {model_path.name} has "
                          f"{', '.join(others) or 'another pooling'}: set EMBEDDING_BACKEND=torch")


def open_session(path: Path, threads: int = 1, optimized_to: Path | None = None) -> Session:
    """An onnxruntime CPU session on `threads` intra-op threads (1: the caller's thread alone);
    `optimized_to` also saves the graph it runs (tests check which kernels it holds)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning worker threads steal the core other processes (Postgres, the LLM) need.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if optimized_to is not None:
        opts.optimized_model_filepath = str(optimized_to)
    session: Session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"],
                                            disabled_optimizers=list(DISABLED_FUSIONS))
    return session


class OnnxEmbedder(Embedder):
    """Same interface and vectors as the PyTorch embedder; `quantized` picks the int8 model."""

    def __init__(self, model_path: str, export_root: Path, *, quantized: bool, threads: int | None = None,
                 max_tokens: int | None = None) -> None:
        from tokenizers import Tokenizer

        self.backend = "onnx-int8" if quantized else "onnx"
        self.model_path = model_path
        check_supported(Path(model_path))
        self.directory = ensure_exported(export_root, model_path)
        directory = self.directory
        # Each text alone: dynamic int8 quantization scales activations over the whole input, so in a
        # padded batch a chunk's vector depended on its neighbours (not the same as itself alone);
        # alone, no padding is computed either, and it measured no slower (evals/results/README.md,
        # "Embedding backends").
        super().__init__(model_path, 1, max_tokens)
        self.batch_threads = threads or os.cpu_count() or 1

        # Documents: one single-threaded run per text, `workers` texts at a time (ONNX Runtime releases
        # the GIL). On two cores this beat one text at a time on two intra-op threads, whose hand-offs
        # (no spinning) cost more than a 220-token text's matrices gain (onnx_fusions.md).
        self.workers = max(1, self.batch_threads)
        self._doc_session = open_session(directory / FILES[self.backend])
        # One short query: one thread as well (hand-offs between two threads cost more than they save).
        self._query_session = self._doc_session
        self._input_names = {i.name for i in self._doc_session.get_inputs()}
        self._counter = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._counter.no_truncation()
        self._counter.no_padding()
        self._encoder = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._encoder.enable_truncation(self.max_tokens)
        self._encoder.no_padding()
        self._lock = threading.Lock()  # one batch at a time: two would fight over the same cores

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._counter.encode_batch(list(texts), add_special_tokens=False)]

    def _encode(self, texts: Sequence[str]) -> list[Encoding]:
        encodings: list[Encoding] = self._encoder.encode_batch(list(texts))
        return encodings

    def _run(self, encodings: list[Encoding], session: Session) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        vectors: np.ndarray = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return vectors.astype(np.float32)

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(self._encode(texts), self._doc_session)

    def embed_documents(self, texts: Sequence[str], progress: BatchProgress | None = None) -> np.ndarray:
        """Each text alone (see __init__), `workers` at a time, longest first so that the workers
        finish together; one tokenisation pass; vectors in the input order."""
        total = len(texts)
        out = np.zeros((total, self.dimension), dtype=np.float32)
        if not total:
            return out
        encodings = self._encode(texts)
        order = sorted(range(total), key=lambda i: -len(encodings[i].ids))

        def one(i: int) -> np.ndarray:
            vector: np.ndarray = self._run([encodings[i]], self._doc_session)[0]
            return vector

        with self._lock, ThreadPoolExecutor(min(self.workers, total)) as pool:
            for done, (i, vec) in enumerate(zip(order, pool.map(one, order), strict=True), start=1):
                out[i] = vec
                if progress is not None:
                    progress(done, total)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._run(self._encode([text]), self._query_session)[0]
        return vector
