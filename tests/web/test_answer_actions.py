"""An answer's actions in the real page over the real server: copy (the answer with its sources
as text), thumbs down with a note (kept when the chat is opened again), and answer again (a new
answer; the earlier one stays, marked). The server's side of stop, regenerate and feedback is
tests/server/test_chat_actions.py."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import QUESTION, accessibility_problems, ask, aurora_pdf, upload_by_api


def test_copy_thumbs_with_a_note_and_answer_again(open_page, shot) -> None:
    w = open_page()
    page = w.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_up(page)
    upload_by_api(page, "aurora-report.pdf", aurora_pdf())
    page.reload()
    page.get_by_role("button", name="New chat", exact=True).click()
    page.get_by_role("dialog", name="New chat").get_by_role("button", name="Create chat").click()
    page.get_by_role("heading", name="Untitled chat").wait_for()
    answer = ask(page, QUESTION)
    expect(answer).to_contain_text("412 million")

    answer.get_by_role("button", name="Copy").click()
    expect(answer.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("The figure is 412 million [") and "\n\nSources:\n[" in copied, copied
    assert "aurora-report.pdf, page" in copied, copied

    answer.get_by_role("button", name="Bad answer").click()
    expect(answer.get_by_role("button", name="Bad answer")).to_have_attribute("aria-pressed", "true")
    note = answer.get_by_label("A note on this answer")
    expect(note).to_be_focused()
    note.fill("Right figure, but say which year")
    answer.get_by_role("button", name="Save the note").click()
    expect(answer.locator(".feedback-said")).to_contain_text("Right figure, but say which year")
    shot(page, "desktop-22-feedback")
    problems = accessibility_problems(page)
    assert not problems, problems

    answer.get_by_role("button", name="Answer again").click()
    newest = page.locator(".messages > li.msg").nth(2)
    newest.and_(page.locator(":not(.msg-streaming)")).wait_for(timeout=120_000)
    expect(newest).to_contain_text("412 million")
    expect(answer).to_contain_text("Earlier answer")
    expect(answer.get_by_role("button", name="Answer again")).to_have_count(0)
    expect(newest.get_by_role("button", name="Answer again")).to_be_visible()
    shot(page, "desktop-23-answered-again")

    # opened again: the verdict and both answers are there, the earlier one marked
    page.reload()
    page.locator(".msg-assistant").nth(1).wait_for()
    first = page.locator(".msg-assistant").first
    expect(first).to_contain_text("Earlier answer")
    expect(first.get_by_role("button", name="Bad answer")).to_have_attribute("aria-pressed", "true")
    expect(first.locator(".feedback-said")).to_contain_text("Right figure, but say which year")
    w.clean()
