"""A person's first session, end to end in Chromium: sign up, upload two PDFs and watch both
steppers finish, ask and watch the answer stream, open the cited page with its highlight, ask a
follow-up, delete a document and see its citations go. No console error, no request off the origin."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import (
    FOLLOW_UP,
    QUESTION,
    amber_pixels,
    ask,
    aurora_pdf,
    borealis_pdf,
    nav,
    pdf_file,
    watch_statuses,
    watch_stream,
)


def test_sign_up_upload_ask_cite_follow_up_delete(open_page, shot) -> None:
    w = open_page()
    page = w.page
    page.goto("/#/signup")
    page.get_by_role("heading", name="Create your account").wait_for()
    shot(page, "desktop-01-sign-up")
    sign_up(page)
    shot(page, "desktop-02-no-chats")

    # two PDFs at once: each card walks its stepper from the job's events to "Ready"
    nav(page, "Documents")
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    watch_statuses(page)
    page.locator("#file-input").set_input_files([pdf_file("aurora-report.pdf", aurora_pdf()),
                                                 pdf_file("borealis.pdf", borealis_pdf())])
    expect(page.locator(".upload")).to_have_count(2)
    shot(page, "desktop-03-uploading")
    expect(page.locator(".upload[data-state=done]")).to_have_count(2, timeout=180_000)
    seen = " ".join(page.evaluate("window.__statuses"))
    assert any(s in seen for s in ("Reading", "Splitting", "Indexing", "Waiting", "Starting")), seen
    expect(page.locator(".upload").first.locator(".upload-status")).to_contain_text("Ready:")
    rows = page.locator("table.docs tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("table.docs")).to_contain_text("8")  # the report's pages
    shot(page, "desktop-04-documents")

    # a new chat over all documents, the answer streamed token by token
    nav(page, "Chats")
    page.get_by_role("button", name="New chat", exact=True).click()
    dialog = page.get_by_role("dialog", name="New chat")
    dialog.get_by_label("Title (optional)").fill("Aurora and Borealis")
    shot(page, "desktop-05-new-chat")
    dialog.get_by_role("button", name="Create chat").click()
    page.get_by_role("heading", name="Aurora and Borealis").wait_for()
    watch_stream(page)
    answer = ask(page, QUESTION)
    expect(answer).to_contain_text("412 million")
    lengths = page.evaluate("window.__lengths")
    # it grew piece by piece: the model's draft, then the checked answer that replaces it
    assert len(set(lengths)) >= 4 and sum(b > a for a, b in zip(lengths, lengths[1:], strict=False)) >= 3, lengths
    assert len(page.evaluate("window.__thotqen.tokenDelays")) == 1
    expect(answer.locator(".sources")).to_contain_text("aurora-report.pdf, page")
    shot(page, "desktop-06-answer")

    # the cited page, rendered by the server, with the passage highlighted
    answer.locator(".answer-text a.cite").first.click()
    viewer = page.locator("#viewer")
    page.wait_for_selector("#viewer[data-loaded]")
    expect(page.locator("#viewer-status")).to_have_text("The evidence is highlighted.")
    expect(page.locator("#viewer-where")).to_contain_text("(cited)")
    assert amber_pixels(page) > 300  # the evidence sentence, not the whole passage
    assert page.locator("#viewer-download").get_attribute("href").endswith("/file")
    assert len(page.evaluate("window.__thotqen.pageImages")) == 1
    shot(page, "desktop-07-cited-page")
    page.get_by_role("button", name="Next page").click()
    expect(page.locator("#viewer-where")).not_to_contain_text("(cited)")
    page.keyboard.press("Escape")
    expect(viewer).not_to_be_visible()

    # a follow-up is understood in context
    follow = ask(page, FOLLOW_UP)
    expect(follow).to_contain_text("5,300")
    expect(follow.locator("a.cite").first).to_be_visible()

    # delete the cited document: its citations in the chat are gone
    nav(page, "Documents")
    page.get_by_role("button", name="Delete aurora-report.pdf").click()
    confirm = page.get_by_role("dialog", name="Delete aurora-report.pdf?")
    expect(confirm).to_be_visible()
    shot(page, "desktop-08-delete-confirm")
    confirm.get_by_role("button", name="Delete").click()
    expect(page.locator("table.docs tbody tr")).to_have_count(1)
    nav(page, "Chats")
    page.get_by_role("link", name="Aurora and Borealis").click()
    page.get_by_role("heading", name="Aurora and Borealis").wait_for()
    expect(page.locator(".messages a.cite")).to_have_count(0)
    expect(page.locator(".messages .cite-gone").first).to_be_visible()
    expect(page.locator(".messages .sources").first).to_contain_text("deleted")
    shot(page, "desktop-09-citations-gone")
    w.clean()
