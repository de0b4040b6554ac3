"""What several browser tests do: make the PDFs, upload through the page, read the page's state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.pdfs import AURORA_TOPICS, long_report, text_pdf

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"
FOLLOW_UP = "And how many people did it employ?"
BOREALIS = ["Borealis Freight opened a new depot in Gdansk in 2022; the depot handles rail and road freight.",
            "Borealis Freight's fleet counted 140 trucks at the end of the year, most of them electric."]


def aurora_pdf() -> bytes:
    return long_report(AURORA_TOPICS, pages_per_topic=2)


def borealis_pdf() -> bytes:
    return text_pdf([(t + " ") * 10 for t in BOREALIS])


def pdf_file(name: str, data: bytes, mime: str = "application/pdf") -> dict[str, Any]:
    return {"name": name, "mimeType": mime, "buffer": data}


def watch_statuses(page: Any) -> None:
    """Record every text the upload cards show (the steppers' live states)."""
    page.evaluate("""() => {
      window.__statuses = [];
      new MutationObserver(() => document.querySelectorAll('.upload-status').forEach(
        (el) => window.__statuses.push(el.textContent))).observe(document.body,
        {subtree: true, childList: true, characterData: true});
    }""")


def watch_stream(page: Any) -> None:
    """Record the length of the answer being written each time it grows."""
    page.evaluate("""() => {
      window.__lengths = [];
      new MutationObserver(() => {
        const t = document.querySelector('.msg-streaming .answer-text');
        if (t) window.__lengths.push(t.textContent.length);
      }).observe(document.body, {subtree: true, childList: true, characterData: true});
    }""")


def new_chat(page: Any, title: str) -> None:
    """From any screen: a new chat over all documents, titled `title`, open."""
    nav(page, "Chats")
    page.get_by_role("button", name="New chat", exact=True).click()
    dialog = page.get_by_role("dialog", name="New chat")
    dialog.get_by_label("Title (optional)").fill(title)
    dialog.get_by_role("button", name="Create chat").click()
    page.get_by_role("heading", name=title).wait_for()


def ask(page: Any, question: str) -> Any:
    """Type the question, send it with Enter, wait for the answer; the last message's locator."""
    count = page.locator(".messages > li.msg").count()
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    last = page.locator(".messages > li.msg").nth(count + 1)
    last.and_(page.locator(":not(.msg-streaming)")).wait_for(timeout=120_000)
    return last


def amber_pixels(page: Any) -> int:
    """Highlighted pixels in the page image the viewer shows (drawn into a canvas and counted)."""
    return page.evaluate("""() => {
      const img = document.getElementById('viewer-img');
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i + 1] > 150 && d[i + 1] < 235 && d[i + 2] < 140) n++;
      return n;
    }""")


def csrf(page: Any) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "thotqen_csrf")


def upload_by_api(page: Any, name: str, data: bytes) -> str:
    """Upload with the page's session (its cookies and CSRF token) and wait until ingested."""
    res = page.request.post("/api/documents", headers={"X-CSRF-Token": csrf(page)},
                            multipart={"file": {"name": name, "mimeType": "application/pdf", "buffer": data}})
    assert res.status == 202, res.text()
    job = res.json()["job_id"]
    for _ in range(600):
        status = page.request.get(f"/api/jobs/{job}").json()["status"]
        if status in ("done", "failed"):
            assert status == "done"
            return res.json()["document_id"]
        page.wait_for_timeout(200)
    raise AssertionError("ingestion did not finish")


def nav(page: Any, name: str) -> None:
    """Follow a link of the main navigation."""
    page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True).click()


AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"


def accessibility_problems(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[str]:
    """axe-core's violations of these impacts on the page as it is now, one line each (rule, impact,
    the first nodes). Evaluated through the browser's debugging protocol, so the page's CSP (no
    inline scripts) is untouched and the app never serves axe."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    violations = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
      .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))""")
    return [f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes']}" for v in violations if v["impact"] in impacts]
