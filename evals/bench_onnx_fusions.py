"""Which onnxruntime BERT fusions and thread layouts make the int8 embedder fastest on this CPU.

    python evals/bench_onnx_fusions.py [--files 3] [--texts 120] [--rounds 3]

Exports the packaged MiniLM once (as providers/onnx_embedder.py does), then makes int8 models with
onnxruntime's fusions all on (the export before EXPORT_VERSION 3), without SkipLayerNormalization,
and without SkipLayerNormalization and BiasGelu (the default now; the session's own optimizer is
kept from re-making them). Each embeds the same child chunks one at a time on one thread, in
interleaved rounds; reported: CPU ms per chunk (this process's CPU time, which load from other
sessions changes least), the cosine of the pooled vectors to PyTorch's, and for the default model
the wall-clock rate of two layouts on all cores: one text at a time on N intra-op threads, or N
single-threaded texts at a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.bench_embed import chunk_texts  # noqa: E402
from evals.common import FINANCEBENCH, write_result  # noqa: E402

VARIANTS = {  # name: (fusions switched off in the export, fusions the session may not make)
    "all fusions (before)": ((), ()),
    "no SkipLayerNormalization": (("enable_skip_layer_norm",), ("SkipLayerNormFusion",)),
    "no SkipLayerNormalization, no BiasGelu (default)": (("enable_skip_layer_norm", "enable_bias_gelu"),
                                                         ("SkipLayerNormFusion", "BiasGeluFusion")),
}


def export_raw(model_path: str, out: Path) -> None:
    import warnings

    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(2, 16, dtype=torch.long) for _ in names)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, dummy, str(out), input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
                          opset_version=17, dynamo=False)


def make_int8(raw: Path, out: Path, off: tuple[str, ...]) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    fusions = FusionOptions("bert")
    for flag in off:
        setattr(fusions, flag, False)
    fused = out.with_suffix(".fp32.onnx")
    optimize_model(str(raw), model_type="bert", num_heads=12, hidden_size=384, opt_level=1,
                   optimization_options=fusions).save_model_to_file(str(fused))
    quantize_dynamic(str(fused), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def session(path: Path, threads: int, disabled: tuple[str, ...]):  # noqa: ANN201
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"],
                                disabled_optimizers=list(disabled))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--texts", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--name", default="onnx_fusions")
    args = parser.parse_args()

    import numpy as np
    from tokenizers import Tokenizer

    from providers.embeddings import build_embedder, packaged_model_path

    torch_embedder = build_embedder("torch")
    files = sorted((FINANCEBENCH / "pdfs").glob("*.pdf"))[: args.files]
    every = chunk_texts(files, torch_embedder.count_tokens)
    texts = every[:: max(1, len(every) // args.texts)][: args.texts]
    reference = torch_embedder.embed_documents(texts)
    tokenizer = Tokenizer.from_file(str(Path(packaged_model_path()) / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()
    feeds = []
    for enc in tokenizer.encode_batch(texts):
        ids = np.array([enc.ids], dtype=np.int64)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})

    def pooled(hidden) -> np.ndarray:  # noqa: ANN001
        v = hidden[0].mean(axis=0)
        return v / np.linalg.norm(v)

    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.onnx"
        export_raw(packaged_model_path(), raw)
        sessions = {}
        for i, (name, (off, disabled)) in enumerate(VARIANTS.items()):
            path = Path(tmp) / f"v{i}.onnx"
            make_int8(raw, path, off)
            sessions[name] = session(path, 1, disabled)
        default = list(VARIANTS)[-1]
        layouts = {f"1 text at a time on {cores} threads": session(Path(tmp) / f"v{len(VARIANTS) - 1}.onnx", cores,
                                                                    VARIANTS[default][1]),
                   f"{cores} single-threaded texts at a time": sessions[default]}
        load_start = os.getloadavg()
        cosine, vectors = {}, {}
        for name, s in sessions.items():
            vectors[name] = np.stack([pooled(s.run(None, f)[0]) for f in feeds])
            cos = (vectors[name] * reference).sum(axis=1)
            # an index embedded with the model before keeps its identity: how far its vectors moved
            moved = (vectors[name] * vectors[next(iter(sessions))]).sum(axis=1)
            cosine[name] = {"mean": round(float(cos.mean()), 4), "min": round(float(cos.min()), 4),
                            "to_before_mean": round(float(moved.mean()), 4),
                            "to_before_min": round(float(moved.min()), 4)}
        cpu_ms: dict[str, list[float]] = {n: [] for n in sessions}
        rates: dict[str, list[float]] = {n: [] for n in layouts}
        order = sorted(range(len(feeds)), key=lambda i: -feeds[i]["input_ids"].shape[1])
        for _ in range(args.rounds):
            for name, s in sessions.items():
                c0 = time.process_time()
                for f in feeds:
                    s.run(None, f)
                cpu_ms[name].append((time.process_time() - c0) * 1000 / len(feeds))
            for name, s in layouts.items():
                t0 = time.perf_counter()
                if name.startswith("1 text"):
                    for f in feeds:
                        s.run(None, f)
                else:
                    with ThreadPoolExecutor(cores) as pool:
                        list(pool.map(lambda i, s=s: s.run(None, feeds[i]), order))
                rates[name].append(len(feeds) / (time.perf_counter() - t0))
        load_end = os.getloadavg()
        # where the default model's time goes: onnxruntime's own per-kernel profile, one pass
        import json

        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.enable_profiling = True
        opts.profile_file_prefix = str(Path(tmp) / "profile")
        prof_session = ort.InferenceSession(str(Path(tmp) / f"v{len(VARIANTS) - 1}.onnx"), opts,
                                            providers=["CPUExecutionProvider"],
                                            disabled_optimizers=list(VARIANTS[default][1]))
        for f in feeds:
            prof_session.run(None, f)
        kernel_us: dict[str, int] = {}
        for event in json.loads(Path(prof_session.end_profiling()).read_text()):
            if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                op = event["args"]["op_name"]
                kernel_us[op] = kernel_us.get(op, 0) + int(event["dur"])

    lines = ["| int8 model | CPU ms per chunk, one thread (median; rounds) | cosine to torch mean / min "
             "| cosine to the model before mean / min |", "|---|---|---|---|"]
    for name in sessions:
        lines.append(f"| {name} | {statistics.median(cpu_ms[name]):.1f} ({', '.join(f'{c:.1f}' for c in cpu_ms[name])})"
                     f" | {cosine[name]['mean']} / {cosine[name]['min']} "
                     f"| {cosine[name]['to_before_mean']} / {cosine[name]['to_before_min']} |")
    lines += ["", "| layout, default model | chunks/s (median; rounds) |", "|---|---|"]
    lines += [f"| {name} | {statistics.median(r):.1f} ({', '.join(f'{x:.1f}' for x in r)}) |"
              for name, r in rates.items()]
    all_us = sum(kernel_us.values()) or 1
    lines += ["", "| kernel (default model, one thread) | share of kernel time |", "|---|---|"]
    lines += [f"| {op} | {100 * us / all_us:.1f}% |"
              for op, us in sorted(kernel_us.items(), key=lambda kv: -kv[1]) if us / all_us >= 0.005]
    md = "\n".join(lines) + (
        f"\n\n{len(texts)} child chunks of the first {len(files)} filings, {args.rounds} interleaved rounds. Load "
        f"average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end ({cores} cores shared with other "
        f"sessions: CPU ms per chunk changes least with load; wall-clock rates depend on it).\n")
    write_result(args.name, {"texts": len(texts), "rounds": args.rounds, "cpu_ms_per_chunk": cpu_ms,
                             "cosine_to_torch": cosine, "layout_chunks_per_s": rates,
                             "kernel_us": kernel_us,
                             "load_average": {"start": load_start, "end": load_end}}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
