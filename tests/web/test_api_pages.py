"""The LangServe playground and Swagger UI, opened by a signed-in person in the same browser:
both render from the server alone, with no console error; the playground's form is valid and a
run streams; /docs has its Authorize button and every operation."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import QUESTION, aurora_pdf, upload_by_api


def test_playground_runs_and_docs_authorize(open_page, shot) -> None:
    w = open_page()
    page = w.page
    sign_up(page)
    upload_by_api(page, "aurora-report.pdf", aurora_pdf())

    page.goto("/rag/playground/")
    question = page.locator("[id='#/properties/question-input']")
    question.wait_for()
    question.fill(QUESTION)
    invalid = page.locator(".validate.invalid")
    assert invalid.count() == 0, [invalid.nth(i).get_attribute("id") for i in range(invalid.count())]
    start = page.get_by_role("button", name="Start")
    expect(start).to_be_enabled()
    with page.expect_response(lambda r: r.url.endswith("/rag/stream_log") and r.status == 200):
        start.click()
    output = page.get_by_text("412 million").first
    expect(output).to_be_visible(timeout=120_000)
    page.get_by_role("heading", name="Output").scroll_into_view_if_needed()
    shot(page, "desktop-15-playground")

    page.goto("/docs")
    authorize = page.locator(".swagger-ui button.authorize")
    authorize.wait_for()
    assert page.locator(".opblock").count() >= 40
    authorize.click()
    modal = page.locator(".swagger-ui .modal-ux")
    expect(modal).to_contain_text("bearer")
    expect(modal).to_contain_text("session_cookie")
    shot(page, "desktop-16-docs-authorize")
    modal.get_by_role("button", name="Close").first.click()
    # a signed-in browser can try an operation: the session cookie authenticates it
    op = page.locator("#operations-session-who_api_session_get")
    op.locator(".opblock-summary").click()
    op.get_by_role("button", name="Try it out").click()
    op.get_by_role("button", name="Execute").click()
    expect(op.locator(".responses-table.live-responses-table")).to_contain_text("200")
    w.clean()
