"""Load test: concurrent clients against the real server, with only the LLM replaced.

    python evals/loadtest.py [--clients 5,25,50,100] [--mixes browse,ask] [--duration 40]

Starts a fast fake OpenAI-compatible model (evals/fake_openai.py, the only fake: accounts,
Postgres, retrieval, the graph and SSE are the real ones), then `thotqen serve` on a fresh
embedded database pointed at it (LLM_ORDER=vllm). Seeds --accounts accounts, each with a small
real PDF ingested through the API and a chat. Then, for each mix and client count, runs Locust
headless (evals/locustfile.py) for --duration seconds and reads its statistics: requests,
failures, p50/p95 and throughput, plus the server process's CPU use over the step (100% = one
core). Per-user and per-IP rate limits are lifted for the run (they would otherwise be what is
measured) and the semantic answer cache is off unless --cache (a cache hit skips the graph).
Writes evals/results/loadtest.{json,md}.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.common import write_result  # noqa: E402
from evals.fake_openai import FakeOpenAI, excerpts_in, grades_json, subprocess_env  # noqa: E402
from evals.pdfs import AURORA_TOPICS, long_report  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake_model() -> FakeOpenAI:

    def script(kind: str, prompt: str) -> str:
        if kind == "grade":
            return grades_json(prompt, lambda _text: True)
        if kind == "answer":
            n = len(excerpts_in(prompt)) or 1
            return f"The report gives the figure in excerpt {n} [{n}]."
        return "Aurora Widgets fiscal 2023"

    return FakeOpenAI(script)


def cpu_seconds(pid: int) -> float:
    """CPU seconds of the process and its children still running (uvicorn's worker processes)."""
    total = 0.0
    for p in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def seed(api: str, accounts: int) -> list[dict]:

    out = []
    with httpx.Client(base_url=api, timeout=300) as c:
        for i in range(accounts):
            res = c.post("/api/auth/signup", json={"username": f"load-{i}-{os.getpid()}",
                                                    "password": "a long load-test passphrase"})
            res.raise_for_status()
            headers = {"Authorization": f"Bearer {res.json()['access_token']}"}
            pdf = long_report([f"{t} (account {i})" for t in AURORA_TOPICS], pages_per_topic=1)
            up = c.post("/api/documents", headers=headers, files={"file": (f"report-{i}.pdf", pdf, "application/pdf")})
            up.raise_for_status()
            with c.stream("GET", f"/api/jobs/{up.json()['job_id']}/events", headers=headers) as events:
                last = [line for line in events.iter_lines() if line.startswith("event:")][-1]
            if last.strip() != "event: done":
                raise RuntimeError(f"seeding account {i}: ingestion ended with {last}")
            chat = c.post("/api/chats", headers=headers, json={"title": "seed"})
            chat.raise_for_status()
            out.append({"token": res.json()["access_token"], "document_id": up.json()["document_id"],
                        "job_id": up.json()["job_id"], "chat_id": chat.json()["id"]})
    return out


def run_step(api: str, mix: str, clients: int, duration: int, seed_file: Path, server_pid: int,
             workdir: Path) -> dict:
    prefix = workdir / f"{mix}-{clients}"
    user_class = {"browse": "BrowseClient", "ask": "AskClient"}[mix]
    cpu0, t0 = cpu_seconds(server_pid), time.monotonic()
    subprocess.run([sys.executable, "-m", "locust", "-f", str(ROOT / "evals/locustfile.py"), user_class,
                    "--headless", "-u", str(clients), "-r", str(max(1, clients // 5)), "-t", f"{duration}s",
                    "--host", api, "--csv", str(prefix), "--only-summary", "--stop-timeout", "30"],
                   env={**os.environ, "LOAD_SEED": str(seed_file)}, check=False, capture_output=True, text=True,
                   timeout=duration + 180)
    cpu = (cpu_seconds(server_pid) - cpu0) / (time.monotonic() - t0)
    with open(f"{prefix}_stats.csv") as f:
        total = next(r for r in csv.DictReader(f) if r["Name"] == "Aggregated")
    with open(f"{prefix}_failures.csv") as f:
        failures = [{"name": r["Name"], "error": r["Error"][:200], "count": int(r["Occurrences"])}
                    for r in csv.DictReader(f)]
    return {"mix": mix, "clients": clients, "requests": int(total["Request Count"]),
            "errors": int(total["Failure Count"]), "p50_ms": float(total["50%"]), "p95_ms": float(total["95%"]),
            "rps": round(float(total["Requests/s"]), 1), "server_cpu_percent": round(100 * cpu),
            "load_average": round(os.getloadavg()[0], 1), "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="5,25,50,100")
    parser.add_argument("--mixes", default="browse,ask")
    parser.add_argument("--duration", type=int, default=40, help="seconds per step")
    parser.add_argument("--accounts", type=int, default=10)
    parser.add_argument("--cache", action="store_true", help="keep the semantic answer cache on")
    parser.add_argument("--workers", type=int, default=1, help="server processes (thotqen serve --workers)")
    parser.add_argument("--name", default="loadtest")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="thq-load-", dir="/tmp"))  # short: Postgres sockets live here
    fake = fake_model()
    port = free_port()
    api = f"http://127.0.0.1:{port}"
    env = subprocess_env(fake, str(workdir / "home"), QUESTIONS_PER_HOUR="1000000", LOGIN_IP_LIMIT="1000000",
                         ANSWER_CACHE=str(args.cache).lower())
    log = (workdir / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                               "--workers", str(args.workers)],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    steps: list[dict] = []
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{api}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            raise RuntimeError(f"server did not start; see {workdir / 'server.log'}")
        seed_file = workdir / "seed.json"
        seed_file.write_text(json.dumps({"accounts": seed(api, args.accounts)}))
        for mix in args.mixes.split(","):
            for clients in [int(c) for c in args.clients.split(",")]:
                step = run_step(api, mix, clients, args.duration, seed_file, server.pid, workdir)
                steps.append(step)
                print(json.dumps({k: v for k, v in step.items() if k != "failures"}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)
        fake.close()

    lines = ["| mix | clients | requests | errors | p50 ms | p95 ms | req/s | server CPU | load avg |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {s['mix']} | {s['clients']} | {s['requests']} | {s['errors']} | {s['p50_ms']:.0f} | "
              f"{s['p95_ms']:.0f} | {s['rps']} | {s['server_cpu_percent']}% | {s['load_average']} |" for s in steps]
    md = "\n".join(lines) + (
        f"\n\nLocust headless, {args.duration} s a step, think time 0.5–1.5 s, {args.accounts} seeded accounts, "
        f"{args.workers} uvicorn worker process(es), embedded Postgres, answer cache "
        f"{'on' if args.cache else 'off'}; the LLM is a fake OpenAI-compatible server answering at once. "
        f"Ask requests are timed to the end of the SSE answer. Server CPU: the server processes' CPU seconds "
        f"per wall second (100% = one of {os.cpu_count()} cores; the load tool and the fake model share them).\n")
    write_result(args.name, {"steps": steps, "duration_s": args.duration, "accounts": args.accounts,
                             "cache": args.cache, "workers": args.workers}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
