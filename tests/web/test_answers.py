"""Answers as a reader sees them, from fake outcomes served to the real page (Playwright routes
the chat's API calls; the page, its modules and the vendored markdown lexer are the real ones):
a table rendered as a table, markup from the model or a document shown as text, sources merged
by document and page, the [n] preview on hover, focus and tap with its evidence line, the
calculation's working under the answer, the newest answer above the phone's message box, and
axe-core's check of each screen."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import accessibility_problems

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+ip1sAAAAASUVORK5CYII=")
DOC = str(uuid.uuid4())
CHAT = str(uuid.uuid4())
EVIL = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
ANSWER = ("Revenue **rose** in fiscal 2023 [1][2]:\n\n"
          "| Year | Revenue |\n|---|--:|\n| 2022 | 380 million |\n| 2023 | 412 million [3] |\n\n"
          "- growth came from *widgets*\n- see `note 4`\n\n"
          f"{EVIL} [click](javascript:window.__pwned=3) "
          "<a href=\"javascript:window.__pwned=4\" onclick=\"window.__pwned=5\">x</a>")
CITATIONS = [
    {"n": 1, "document_id": DOC, "name": "report.pdf", "page": 4, "text": f"Total revenue was 412 million {EVIL}",
     "evidence": [{"text": "Total revenue 412 million", "box": [10, 20, 200, 32]}]},
    {"n": 2, "document_id": DOC, "name": "report.pdf", "page": 4, "text": "Revenue rose 8% on 2022."},
    {"n": 3, "document_id": DOC, "name": "report.pdf", "page": 5, "text": "In 2022 revenue was 380 million."},
]
VERIFICATION = {"verified": True, "refused": False, "figures": [],
                "calculation": {"working": "412 / 380 = 1.084 [1][3]"}}


def chat_detail(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": CHAT, "title": f"Title {EVIL}", "document_ids": None, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z", "messages": messages}


def assistant(mid: int, content: str, **meta: Any) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "content": content, "status": "ok", "citations": CITATIONS,
            "meta": {"cited": [1, 2, 3], **meta}, "created_at": "2026-01-01T00:00:00Z", "feedback": None}


def user(mid: int, content: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": content, "status": "ok", "citations": [], "meta": {},
            "created_at": "2026-01-01T00:00:00Z", "feedback": None}


def serve_fakes(page: Any, messages: list[dict[str, Any]]) -> None:
    doc = {"id": DOC, "name": f"report {EVIL}.pdf", "status": "ready", "pages": 8, "chunks": 20, "size_bytes": 1000,
           "created_at": "2026-01-01T00:00:00Z", "format": "pdf", "error": None, "ocr_pages": 0}
    page.route("**/api/documents", lambda r: r.fulfill(json={"documents": [doc]}))
    page.route(f"**/api/documents/{DOC}/pages/**", lambda r: r.fulfill(body=PNG, content_type="image/png",
                                                                    headers={"X-Highlighted-Lines": "1"}))
    page.route("**/api/chats", lambda r: r.fulfill(json={"chats": [{**chat_detail([]), "message_count": 2}]})
               if r.request.method == "GET" else r.continue_())
    page.route(f"**/api/chats/{CHAT}", lambda r: r.fulfill(json=chat_detail(messages)))

    def ask(route: Any) -> None:
        done = {"message_id": 99, "answer": ANSWER, "citations": CITATIONS, "cited": [1, 2, 3],
                "verification": VERIFICATION, "route": "documents", "provider": "fake", "cached": False}
        events = [("sources", {"sources": CITATIONS}), ("token", {"token": ANSWER}), ("done", done)]
        body = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        route.fulfill(body=body, content_type="text/event-stream")

    page.route(f"**/api/chats/{CHAT}/messages", ask)


def assert_inert(page: Any) -> None:
    """Nothing the model or a document wrote became markup: no script ran, no element carries an
    event handler or a javascript: address, and the markup shows as text."""
    assert page.evaluate("window.__pwned") is None
    found = page.evaluate("""() => [...document.querySelectorAll('main *')].filter((el) =>
      el.tagName === 'SCRIPT' || el.tagName === 'IMG' && !el.closest('dialog') ||
      [...el.attributes].some((a) => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value)))
      .map((el) => el.outerHTML.slice(0, 120))""")
    assert found == [], found


def test_a_formatted_answer_shows_markup_as_text_and_previews_its_sources(open_page, shot) -> None:
    w = open_page()
    page = w.page
    sign_up(page)
    serve_fakes(page, [user(1, f"A question {EVIL}"), assistant(2, ANSWER, verification=VERIFICATION)])
    page.goto(f"/#/chats/{CHAT}")
    answer = page.locator(".msg-assistant").first
    answer.wait_for()
    # the table is a table, the list a list, emphasis and code are elements
    table = answer.locator(".answer-text table")
    expect(table.locator("thead th")).to_have_text(["Year", "Revenue"])
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").nth(1).locator("a.cite")).to_have_text("[3]")  # a marker inside a cell
    expect(answer.locator(".answer-text li")).to_have_count(2)
    expect(answer.locator(".answer-text strong")).to_have_text("rose")
    expect(answer.locator(".answer-text em")).to_have_text("widgets")
    expect(answer.locator(".answer-text code")).to_have_text("note 4")
    # markup from the model, a document's name, a chat title: text, never elements
    expect(answer.locator(".answer-text")).to_contain_text("<script>window.__pwned=2</script>")
    expect(answer.locator(".answer-text")).to_contain_text("[click](javascript:window.__pwned=3)")
    expect(page.locator(".chat-heading")).to_have_text(f"Title {EVIL}")
    expect(page.locator(".msg-user")).to_have_text(f"A question {EVIL}")
    assert_inert(page)
    # sources merged by document and page; the evidence and the calculation under the answer
    sources = answer.locator(".sources li")
    expect(sources).to_have_count(2)
    expect(sources.first).to_contain_text("[1][2]")
    expect(sources.first).to_contain_text(f"report {EVIL}.pdf, page 4")
    expect(answer.locator(".evidence")).to_contain_text("Total revenue 412 million")
    expect(answer.locator(".working")).to_contain_text("412 / 380 = 1.084")
    expect(answer.locator(".working a.cite")).to_have_count(2)
    shot(page, "desktop-20-formatted-answer")

    # the preview: on hover, and on keyboard focus, with the evidence line (else the passage)
    answer.locator(".answer-text a.cite").first.hover()
    tip = page.get_by_role("tooltip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("page 4")
    expect(tip).not_to_contain_text("null")
    expect(tip).to_contain_text("Total revenue 412 million")
    assert_inert(page)
    shot(page, "desktop-21-source-preview")
    page.mouse.move(5, 5)
    expect(tip).to_be_hidden()
    answer.locator(".answer-text a.cite").nth(1).focus()
    expect(tip).to_contain_text("Revenue rose 8% on 2022.")
    assert answer.locator(".answer-text a.cite").nth(1).get_attribute("aria-describedby") == "cite-tip"
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()
    problems = accessibility_problems(page)
    assert not problems, problems

    # a new answer streamed in renders the same way, with its actions
    page.get_by_label("Your question").fill("And the growth?")
    page.get_by_label("Your question").press("Enter")
    newest = page.locator(".msg-assistant").nth(1)
    expect(newest.locator(".answer-text table")).to_be_visible()
    expect(newest.locator(".working")).to_contain_text("412 / 380")
    expect(newest.get_by_role("button", name="Copy")).to_be_visible()
    assert_inert(page)
    w.clean()


def test_phone_shows_the_newest_answer_above_the_message_box_and_previews_on_tap(open_page, shot) -> None:
    w = open_page(phone=True)
    page = w.page
    sign_up(page)
    long_chat = [m for i in range(4) for m in (user(10 + 2 * i, f"Question {i}"), assistant(11 + 2 * i, ANSWER))]
    serve_fakes(page, long_chat)
    page.goto(f"/#/chats/{CHAT}")
    page.locator(".msg-assistant").nth(3).wait_for()
    page.wait_for_timeout(300)
    # the message box does not take focus on a touch screen (no keyboard over the answer)
    assert page.evaluate("document.activeElement.id") != "question"
    last = page.locator(".messages > li").last.bounding_box()
    composer = page.locator(".composer").bounding_box()
    assert last["y"] < composer["y"] and last["y"] + min(last["height"], 200) <= composer["y"] + 1, (last, composer)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "phone-10-newest-answer")
    # a first tap previews the source, with a button that opens the page
    page.locator(".msg-assistant").nth(3).locator(".answer-text a.cite").first.tap()
    tip = page.get_by_role("tooltip")
    expect(tip).to_contain_text("Total revenue 412 million")
    expect(tip.get_by_role("button", name="Open the page")).to_be_visible()
    shot(page, "phone-11-source-preview")
    tip.get_by_role("button", name="Open the page").tap()
    expect(page.locator("#viewer")).to_be_visible()
    problems = accessibility_problems(page)
    assert not problems, problems
    w.clean()
