"""A citation of a scanned page, in Chromium: the sources list says the text was recognised, and the
cited-page view marks the passage on the page image as it does on a page with a text layer."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import amber_pixels, ask, nav, upload_by_api

STAFF_PAGE = ("Aurora Widgets annual report for fiscal 2023.\n"
              "Aurora Widgets employed 5,300 people at the end of fiscal 2023, up from 4,900 a year earlier.\n"
              "Most of them work in the plants at Tampere and Oulu; about 600 work in sales offices abroad.")


def test_a_scanned_page_is_cited_with_its_passage_highlighted(open_page, shot) -> None:
    from evals.pdfs import rasterised, text_pdf

    w = open_page()
    page = w.page
    sign_up(page)
    upload_by_api(page, "staff-scan.pdf", rasterised(text_pdf([STAFF_PAGE])))
    nav(page, "Chats")
    page.get_by_role("button", name="New chat", exact=True).click()
    page.get_by_role("dialog", name="New chat").get_by_role("button", name="Create chat").click()
    page.get_by_label("Your question").wait_for()
    answer = ask(page, "How many people did Aurora Widgets employ at the end of fiscal 2023?")
    expect(answer).to_contain_text("5,300")
    expect(answer.locator(".sources")).to_contain_text("staff-scan.pdf, page 1 — recognised text")

    answer.locator(".answer-text a.cite").first.click()
    page.wait_for_selector("#viewer[data-loaded]")
    expect(page.locator("#viewer-status")).to_have_text("The evidence is highlighted.")
    assert amber_pixels(page) > 2000
    shot(page, "desktop-17-cited-scan")
    w.clean()


def test_prefetches_take_one_page_render_at_a_time_so_none_is_refused(open_page) -> None:
    """An answer citing several pages, then a pointer over more markers: the pages rendered ahead of a click
    go one at a time, so they never pass the user's page renders at once (PAGE_RENDERS_PER_USER, 429)."""
    from evals.pdfs import AURORA_TOPICS, long_report

    w = open_page()
    page = w.page
    sign_up(page)
    doc = upload_by_api(page, "aurora-report.pdf", long_report(AURORA_TOPICS, pages_per_topic=1))
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if "/pages/" in r.url else None)
    page.evaluate("""async (id) => {
      const viewer = await import('/js/viewer.js');
      for (let n = 1; n <= 4; n++) viewer.prefetchCitation({ page: n, text: 'Aurora Widgets' }, { id, pages: 8 });
    }""", doc)
    for _ in range(600):  # every answer seen, however busy the machine (a 429 comes back as fast as a 200)
        if len(statuses) >= 4:
            break
        page.wait_for_timeout(100)
    assert statuses == [200] * 4, statuses
    w.clean()
