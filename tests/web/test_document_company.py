"""The document list says where a document's company was not read ("Company unknown") and lets its
owner set it: the row's control sends PATCH /api/documents/{id}, the list then shows the company."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import borealis_pdf, nav, upload_by_api


def test_an_unknown_company_is_shown_and_set_from_the_list(open_page) -> None:
    w = open_page()
    page = w.page
    sign_up(page)
    doc = upload_by_api(page, "borealis.pdf", borealis_pdf())  # no cover page: its company is not read
    nav(page, "Documents")
    row = page.locator(f'table.docs tr[data-id="{doc}"]')
    expect(row.locator(".doc-context")).to_contain_text("Company unknown")
    row.get_by_role("button", name="Set company of borealis.pdf").click()
    field = row.get_by_label("Company of borealis.pdf")
    expect(field).to_be_focused()
    field.fill("Borealis Freight AB")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".doc-context")).to_contain_text("Borealis Freight AB")
    assert page.request.get(f"/api/documents/{doc}").json()["issuer"] == "set"
    # Cancel leaves it as it was
    row.get_by_role("button", name="Change company of borealis.pdf").click()
    row.get_by_label("Company of borealis.pdf").fill("Someone else")
    row.get_by_role("button", name="Cancel").click()
    expect(row.locator(".doc-context")).to_contain_text("Borealis Freight AB")
    w.clean()
