"""Answers a reader can check, in Chromium (issue 24): a ratio computed by code with its working and
evidence rows, the cited row highlighted on the page, and a general-knowledge question refused with
no citation. The scripted model answers as a small one does (tests/server/conftest.py `script`)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.unit.test_tables import INCOME_IN_THOUSANDS
from tests.web.conftest import sign_up
from tests.web.helpers import amber_pixels, ask, nav, new_chat, pdf_file

RATIO = "What is Northwind's 2023 cost of revenue divided by net revenue? Round to two decimal places."


def test_a_computed_figure_its_working_and_evidence_and_a_refusal(open_page, shot) -> None:
    w = open_page()
    page = w.page
    sign_up(page)
    nav(page, "Documents")
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    page.locator("#file-input").set_input_files([pdf_file("northwind-2023.pdf", INCOME_IN_THOUSANDS)])
    expect(page.locator(".upload[data-state=done]")).to_have_count(1, timeout=180_000)
    new_chat(page, "Northwind 2023")

    answer = ask(page, RATIO)
    text = answer.locator(".answer-text")
    expect(text).to_contain_text("is 0.53")  # the model's {C}, written by code
    expect(text).to_contain_text("903,112 / 1,693,954 = 0.53")
    expect(answer.locator(".working")).to_contain_text("903,112 / 1,693,954 = 0.53")
    evidence = answer.locator("ul.evidence")
    expect(evidence).to_contain_text("Net revenue")
    expect(evidence).to_contain_text("1,693,954")
    expect(evidence).to_contain_text("Cost of revenue")
    shot(page, "desktop-24-computed-figure")

    answer.locator(".answer-text a.cite").first.click()
    page.wait_for_selector("#viewer[data-loaded]")
    expect(page.locator("#viewer-status")).to_have_text("The evidence is highlighted.")
    assert amber_pixels(page) > 100
    shot(page, "desktop-25-evidence-row")
    page.keyboard.press("Escape")

    refused = ask(page, "What is the capital of Peru?")
    expect(refused).to_contain_text("I cannot answer this from your documents.")
    expect(refused.locator("a.cite")).to_have_count(0)
    expect(refused).not_to_contain_text("Lima")
    shot(page, "desktop-26-out-of-scope-refused")
    w.clean()
