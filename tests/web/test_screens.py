"""Every screen at phone width (390 px), and the admin metrics as charts at both widths.
The screenshots are what docs/screenshots/ holds (`make screenshots`)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.web.conftest import PASSWORD, sign_in, sign_up
from tests.web.helpers import QUESTION, accessibility_problems, ask, aurora_pdf, csrf, nav, pdf_file


def assert_fits(page) -> None:
    """Nothing is wider than the phone (no sideways scrolling); names what is, if something is."""
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .slice(0, 5).map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide


def test_phone_screens_and_metrics(open_page, shot, web_admin) -> None:
    w = open_page(phone=True)
    page = w.page
    page.goto("/#/signin")
    page.get_by_role("heading", name="Sign in to Thotqen").wait_for()
    shot(page, "phone-01-sign-in")
    sign_in(page, web_admin)  # the operator made the admin's account (tests/web/conftest.py)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    expect(page.get_by_role("link", name="Upload documents")).to_be_visible()  # the empty state at phone width too
    assert page.evaluate("document.activeElement.id") != "question"
    shot(page, "phone-02-chats")

    nav(page, "Documents")
    page.locator("#file-input").set_input_files([pdf_file("aurora-report.pdf", aurora_pdf())])
    expect(page.locator(".upload[data-state=done]")).to_have_count(1, timeout=180_000)
    assert_fits(page)
    shot(page, "phone-03-documents")

    nav(page, "Chats")
    page.get_by_role("button", name="New chat", exact=True).click()
    page.get_by_role("dialog", name="New chat").get_by_label("Only the documents I choose").check()
    page.get_by_role("dialog", name="New chat").get_by_label("aurora-report.pdf").check()
    shot(page, "phone-04-new-chat")
    page.get_by_role("dialog", name="New chat").get_by_role("button", name="Create chat").click()
    page.get_by_role("heading", name="Untitled chat").wait_for()
    expect(page.get_by_text("Answers from aurora-report.pdf")).to_be_visible()
    answer = ask(page, QUESTION)
    expect(answer).to_contain_text("412 million")
    expect(page.get_by_role("heading", name=QUESTION)).to_be_visible()  # named after its first question
    assert_fits(page)
    shot(page, "phone-05-conversation")
    answer.locator("a.cite").first.click()
    page.wait_for_selector("#viewer[data-loaded]")
    shot(page, "phone-06-cited-page")
    page.get_by_role("button", name="Close the page").click()

    # the chat list is its own screen at phone width; the conversation has a way back
    page.get_by_role("link", name="‹ Chats").click()
    expect(page.locator(".chat-list a")).to_have_count(1)
    shot(page, "phone-07-chat-list")

    # a workspace, so the Metrics page's table of workspaces is there to fit the phone too
    made = page.request.post("/api/workspaces", headers={"X-CSRF-Token": csrf(page)},
                             data={"name": "Quarterly reporting and investor relations"})
    assert made.status == 201, made.text()
    nav(page, "Metrics")
    page.get_by_role("heading", name="Metrics").wait_for()
    expect(page.locator(".tile").first).to_contain_text("Questions")
    expect(page.locator(f"table.workspace-figures tr[data-workspace='{made.json()['id']}']")).to_contain_text(
        "Quarterly reporting and investor relations")
    # the query log counts every user's questions (other tests' too): at least this one
    expect(page.get_by_role("img", name=re.compile(r"^Answers per provider: (.*, )?vllm [1-9]"))).to_be_visible()
    assert_fits(page)
    shot(page, "phone-08-metrics")
    w.clean()

    desk = open_page()
    desk.page.goto("/#/signin")
    desk.page.get_by_label("Username").fill(web_admin)
    desk.page.get_by_label("Password").fill(PASSWORD)
    desk.page.get_by_role("button", name="Sign in").click()
    nav(desk.page, "Metrics")
    desk.page.get_by_role("heading", name="Metrics").wait_for()
    expect(desk.page.get_by_role("img", name="Latency percentiles: p50")).to_be_visible()
    desk.page.get_by_label("Window").select_option(label="Last hour")
    expect(desk.page.locator(".tile").first).to_contain_text(re.compile(r"Questions\s*[1-9]"))
    expect(desk.page.get_by_role("heading", name="What users said of the answers")).to_be_visible()
    problems = accessibility_problems(desk.page)
    assert not problems, problems
    shot(desk.page, "desktop-17-metrics")
    desk.clean()


def test_metrics_are_for_admins_only(open_page) -> None:
    w = open_page()
    sign_up(w.page)
    expect(w.page.get_by_role("link", name="Metrics")).to_be_hidden()
    w.page.goto("/#/metrics")
    expect(w.page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(w.page.get_by_role("link", name="Go to your chats")).to_be_visible()
    assert w.page.request.get("/api/admin/metrics").status == 403
    w.clean()
