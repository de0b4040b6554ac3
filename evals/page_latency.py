"""What the web page adds to the wait: the cited page image after a click, and the first streamed token.

    python evals/page_latency.py [--out evals/results]

Starts the scripted model server (evals/fake_openai.py, pieces streamed 50 ms apart) and
`thotqen serve` on a fresh embedded database pointed at it; then Debian's Chromium
(/usr/bin/chromium, driven by Playwright) signs up, uploads the 8-page Aurora report and asks its
four questions, each in a new chat, at desktop width (1280 px: 1000 px page images) and at phone
width (390 px: 600 px images), once with the page's prefetch switched off and once as shipped
(the page asks for an answer's cited pages as soon as the answer is written; here the click comes
1 s after the answer, a reader's glance). Each run has its own copy of the report (one extra
line), so no run finds another's renders in the server's cache. For every answer it clicks the
first citation twice:

- cited page, first click: from the click to the image's `load` event, the page rendered by the
  server (PyMuPDF) with the passage highlighted (target: 300 ms);
- cited page, again: the same, answered from the page's cache (target: cached);
- first token: from the moment the bytes holding the first token reach the page's stream reader
  to the next animation frame after the page wrote it (the delay the page adds; target: 50 ms).

The page records these in `window.__thotqen` (web/js/main.js). Writes evals/results/page_latency.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.common import write_result  # noqa: E402
from evals.fake_openai import FakeOpenAI, excerpts_in, grades_json, subprocess_env  # noqa: E402
from evals.pdfs import AURORA_TOPICS, long_report  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
FACTS = {"revenue": "412 million", "employ": "5,300", "capital": "75 million", "dividend": "18 cents"}
QUESTIONS = ["What was Aurora Widgets' total revenue in fiscal 2023?",
             "How many people did Aurora Widgets employ at the end of fiscal 2023?",
             "How much were capital expenditures on the new Leeds factory?",
             "What quarterly dividend per share did the board declare?"]
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}


def fake_model() -> FakeOpenAI:
    def fact(prompt: str) -> str:
        question = prompt.rsplit("Question:", 1)[-1].lower()
        return next((v for k, v in FACTS.items() if k in question), FACTS["revenue"])

    def script(kind: str, prompt: str) -> str:
        if kind == "grade":
            return grades_json(prompt, lambda text: fact(prompt) in text)
        if kind == "answer":
            n = next((n for n, _w, text in excerpts_in(prompt) if fact(prompt) in text), 1)
            return f"According to the report, the figure is {fact(prompt)} [{n}]."
        return "Aurora Widgets fiscal 2023"

    return FakeOpenAI(script, token_delay_s=0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(fake: FakeOpenAI, home: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = subprocess_env(fake, str(home), QUESTIONS_PER_HOUR="100000", ANSWER_CACHE="false")
    server = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            raise RuntimeError("the server exited while starting")
        time.sleep(0.5)
    server.kill()
    raise RuntimeError("the server did not start")


def csrf(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "thotqen_csrf")


def measure(browser, url: str, viewport: dict, prefetch: bool) -> dict[str, list[float]]:
    pdf = long_report([*AURORA_TOPICS, f"This is copy {uuid.uuid4().hex} of the Aurora Widgets report"], 2)
    ctx = browser.new_context(viewport=viewport, base_url=url, device_scale_factor=1)
    page = ctx.new_page()
    page.goto("/#/signup")
    page.get_by_label("Username").fill(f"latency-{uuid.uuid4().hex[:8]}")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Chats").wait_for()
    res = page.request.post("/api/documents", headers={"X-CSRF-Token": csrf(page)},
                            multipart={"file": {"name": "aurora-report.pdf", "mimeType": "application/pdf",
                                                "buffer": pdf}})
    job = res.json()["job_id"]
    while page.request.get(f"/api/jobs/{job}").json()["status"] not in ("done", "failed"):
        time.sleep(0.2)
    page.reload()
    page.get_by_role("heading", name="Chats").wait_for()
    page.evaluate(f"window.__thotqen.noPrefetch = {'false' if prefetch else 'true'}")
    first_clicks: list[float] = []
    again: list[float] = []
    for question in QUESTIONS:
        chat = page.request.post("/api/chats", headers={"X-CSRF-Token": csrf(page)}, data={"title": question[:40]})
        page.goto(f"/#/chats/{chat.json()['id']}")
        box = page.get_by_label("Your question")
        box.fill(question)
        box.press("Enter")
        answer = page.locator(".messages > li.msg-assistant:not(.msg-streaming)").last
        answer.wait_for(timeout=120_000)
        if prefetch:
            page.wait_for_timeout(1000)
        for sink in (first_clicks, again):
            before = len(page.evaluate("window.__thotqen.pageImages"))
            answer.locator(".answer-text a.cite").first.click()
            while len(page.evaluate("window.__thotqen.pageImages")) == before:  # (the CSP forbids eval)
                page.wait_for_timeout(10)
            sink.append(page.evaluate("window.__thotqen.pageImages.at(-1)"))
            page.keyboard.press("Escape")
    delays = page.evaluate("window.__thotqen.tokenDelays")
    ctx.close()
    return {"page_first_ms": first_clicks, "page_again_ms": again, "first_token_delay_ms": delays}


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(statistics.median(values), 1), "max": round(max(values), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="results folder (default evals/results)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    fake = fake_model()
    with tempfile.TemporaryDirectory(prefix="thq-lat-", dir="/tmp") as tmp:
        server, url = start_server(fake, Path(tmp) / "home")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                runs = {f"{name}, {'prefetch' if prefetch else 'no prefetch'}": measure(browser, url, vp, prefetch)
                        for prefetch in (False, True) for name, vp in VIEWPORTS.items()}
                browser.close()
        finally:
            server.terminate()
            server.wait(30)
            fake.close()
    rows = []
    payload: dict = {"runs": runs, "summary": {}}
    for metric, label, target in [("page_first_ms", "cited page, first click", "300 ms"),
                                  ("page_again_ms", "cited page, clicked again", "cached"),
                                  ("first_token_delay_ms", "first token, delay the page adds", "50 ms")]:
        for name in runs:
            s = summary(runs[name][metric])
            payload["summary"][f"{name}:{metric}"] = s
            rows.append(f"| {label} | {name} | {s['n']} | {s['p50']} | {s['max']} | {target} |")
    markdown = ("# Web page latency\n\nFrom a click on a citation to the page image shown, and from the first "
                "token's bytes reaching the page to the frame that shows it, in Debian's Chromium (headless) "
                "against `thotqen serve` with the scripted model (evals/page_latency.py). Milliseconds.\n\n"
                "| what | run | n | p50 | max | target |\n| --- | --- | --- | --- | --- | --- |\n"
                + "\n".join(rows) + "\n")
    write_result("page_latency", payload, markdown, args.out)
    print(markdown)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    sys.exit(main())
