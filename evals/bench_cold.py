"""What a cold `thotqen ask` pays before it answers, part by part, and what the fixes save.

    python evals/bench_cold.py --home DIR [--user bench] [--questions 3] [--backends torch,onnx-int8]

Needs the filings ingested under --home for --user (evals/bench_ingest.py). Two measurements:

1. Parts: a fresh Python process per configuration times, in order, importing the graph stack,
   opening the database, loading the embedder and embedding one question, loading the guardrail
   (Guardian + learned classifier, one verdict), and getting the local model (starting it in the
   process, or finding the one `thotqen model-server` keeps alive) with a one-token completion.
   Configurations: the first --backends embedder (before); the second; the second with a
   kept-alive model server (`thotqen model-server`).
2. Whole questions: --questions development questions (within their filing) asked as cold
   `thotqen ask --json` processes without and with the kept-alive server, and in one warm process
   (after one warm-up question), all with the default settings otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.common import FINANCEBENCH, bench_user, eval_runtime, load_jsonl, write_result  # noqa: E402


def child_parts() -> None:
    """Run in a fresh process: time each cold-start part, print one JSON line."""
    t_start = time.perf_counter()
    parts: dict[str, float] = {}

    def mark(name: str, since: float) -> float:
        now = time.perf_counter()
        parts[name] = round(now - since, 2)
        return now

    t = t_start
    from providers.runtime import configure_process

    configure_process()
    from graph.builder import graph  # noqa: F401 - the imports are what is timed
    from runtime import Runtime  # noqa: F401 - the composition root's imports are a cold ask's too

    t = mark("import graph stack", t)
    rt = eval_runtime()
    rt.database  # noqa: B018 - built on first use: the opening is what is timed
    t = mark("open database", t)
    embedder = rt.embedder
    embedder.embed_query("What was the capital expenditure in 2019?")
    t = mark(f"embedder ({embedder.backend}) + one query", t)
    rt.guard.assess("What was the capital expenditure in 2019?", rt.packaged_embedder)
    t = mark("guardrail (Guardian + classifier) + one verdict", t)
    from providers.local_model import KeptAliveServer

    server = rt.local_model()
    import urllib.request

    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        headers={"Authorization": f"Bearer {server.api_key}", "Content-Type": "application/json"},
        data=json.dumps({"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}).encode())
    with urllib.request.urlopen(request, timeout=600) as response:
        response.read()
    kept = isinstance(server, KeptAliveServer)
    mark("local model (found kept alive) + one token" if kept else "local model (started here) + one token", t)
    parts["total in process"] = round(time.perf_counter() - t_start, 2)
    print(json.dumps(parts))


def run_parts(env: dict[str, str]) -> dict[str, float]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child-parts"], env=env, capture_output=True, text=True,
                         cwd=ROOT, timeout=1200)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    parts = json.loads(out.stdout.strip().splitlines()[-1])
    parts["interpreter start + cli imports"] = round(wall - parts["total in process"], 2)
    parts["wall"] = round(wall, 2)
    return parts


def start_model_server(env: dict[str, str], home: Path) -> subprocess.Popen:
    from providers.local_model import endpoint_file

    proc = subprocess.Popen([sys.executable, "-m", "cli", "model-server"], env=env, cwd=ROOT,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not endpoint_file(home).exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("thotqen model-server did not come up")
        time.sleep(0.5)
    return proc


def cold_ask(env: dict[str, str], user: str, question: str, doc_id: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "cli", "ask", question, "--user", user, "--document", doc_id,
                          "--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return seconds, json.loads(out.stdout)


def main() -> int:
    if "--child-parts" in sys.argv:
        child_parts()
        return 0
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--backends", default="torch,onnx-int8", help="before,after")
    parser.add_argument("--skip-asks", action="store_true")
    args = parser.parse_args()
    home = args.home.resolve()
    env = {**os.environ, "THOTQEN_HOME": str(home)}
    env.pop("DATABASE_URL", None)
    os.environ.update(THOTQEN_HOME=str(home))
    load_start = os.getloadavg()

    parts: dict[str, dict[str, float]] = {}
    before, after = args.backends.split(",")
    # before; the embedder fix alone; both fixes
    for backend, kept in ((before, False), (after, False), (after, True)):
        label = f"{backend}, {'kept-alive model' if kept else 'no kept-alive model'}"
        server = start_model_server(env, home) if kept else None
        try:
            parts[label] = run_parts({**env, "EMBEDDING_BACKEND": backend})
        finally:
            if server is not None:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=120)
        print(label, parts[label], file=sys.stderr)

    asks: dict[str, list[float]] = {}
    write_result("cold_ask", {"parts": parts, "asks": asks, "load_average": {"start": load_start,
                                                                          "end": os.getloadavg()}},
                 render(parts, asks, load_start))
    if not args.skip_asks:
        runtime = eval_runtime(home)  # the warm process's (this one's) parts
        owner, docs = bench_user(runtime, args.user, create_user=False)
        questions = [q for q in load_jsonl(FINANCEBENCH / "questions.jsonl") if f"{q['doc_name']}.pdf" in docs]
        step = max(1, len(questions) // args.questions)
        chosen = questions[::step][: args.questions]
        for q in chosen:
            seconds, _ = cold_ask(env, args.user, q["question"], str(docs[f"{q['doc_name']}.pdf"]))
            asks.setdefault("cold process, model loaded per question", []).append(seconds)
        server = start_model_server(env, home)
        try:
            for q in chosen:
                seconds, _ = cold_ask(env, args.user, q["question"], str(docs[f"{q['doc_name']}.pdf"]))
                asks.setdefault("cold process, kept-alive model", []).append(seconds)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
        from graph.stream import run_config, run_graph

        config = run_config(owner_id=owner, user=args.user)
        warm_up = questions[-1]
        for _kind, _ in run_graph({"question": warm_up["question"],
                                  "document_ids": [str(docs[f"{warm_up['doc_name']}.pdf"])]}, config, runtime):
            pass
        for q in chosen:
            t0 = time.perf_counter()
            for _kind, _ in run_graph({"question": q["question"],
                                       "document_ids": [str(docs[f"{q['doc_name']}.pdf"])]}, config, runtime):
                pass
            asks.setdefault("one warm process", []).append(time.perf_counter() - t0)
        write_result("cold_ask", {"parts": parts, "asks": asks, "load_average": {"start": load_start,
                                                                              "end": os.getloadavg()}},
                     render(parts, asks, load_start))

    print(render(parts, asks, load_start))
    return 0


def render(parts: dict[str, dict[str, float]], asks: dict[str, list[float]], load_start: tuple) -> str:
    names = list(dict.fromkeys(name for p in parts.values() for name in p))  # first-seen order
    lines = ["| part (s) | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(str(p.get(name, "")) for p in parts.values()) + " |")
    md = "\n".join(lines) + "\n"
    if asks:
        md += ("\n| whole question | p50 s | each s |\n|---|---|---|\n" + "".join(
            f"| {k} | {statistics.median(v):.1f} | {', '.join(f'{x:.1f}' for x in v)} |\n" for k, v in asks.items()))
    md += (f"\nLoad average {load_start[0]:.1f} at start, {os.getloadavg()[0]:.1f} at this write: the 2 cores are "
           "shared with other sessions, so every number here is inflated by their load; compare columns within "
           "this run.\n")
    return md


if __name__ == "__main__":
    sys.exit(main())
