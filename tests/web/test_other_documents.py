"""A document that is not a filing, in Chromium (issue 39): a protocol's answer with its evidence line,
cited to the page the fact is on, streamed without ever showing text the check had not passed."""

from __future__ import annotations

from playwright.sync_api import expect

from evals.pdfs import text_pdf
from tests.graph.test_evidence_in_view import PAGE_1, PAGE_2
from tests.web.conftest import sign_up
from tests.web.helpers import ask, nav, new_chat, pdf_file


def test_a_protocols_answer_with_its_evidence_never_showing_unchecked_text(open_page, shot) -> None:
    w = open_page()
    page = w.page
    sign_up(page)
    nav(page, "Documents")
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    page.locator("#file-input").set_input_files([pdf_file("sleep-protocol.pdf", text_pdf([PAGE_1, PAGE_2]))])
    expect(page.locator(".upload[data-state=done]")).to_have_count(1, timeout=180_000)
    new_chat(page, "Sleep protocol")
    page.evaluate("""() => {
      window.__texts = [];
      new MutationObserver(() => {
        const t = document.querySelector('.msg-streaming .answer-text');
        if (t && t.textContent) window.__texts.push(t.textContent);
      }).observe(document.body, {subtree: true, childList: true, characterData: true});
    }""")

    answer = ask(page, "How many people will the sleep hygiene study enrol?")
    text = answer.locator(".answer-text")
    expect(text).to_contain_text("The study will recruit 20 participants")
    expect(text).not_to_contain_text("excerpt")
    final = text.text_content() or ""
    shown = page.evaluate("window.__texts")
    # what streamed was the checked answer arriving piece by piece: never the model's own wording
    assert shown and all(final.startswith(t.strip()) for t in shown), (shown, final)
    expect(answer.locator("ul.evidence")).to_contain_text("recruit 20 participants")
    expect(answer.locator(".sources")).to_contain_text("sleep-protocol.pdf, page 2")
    shot(page, "desktop-27-protocol-answer")
    w.clean()
