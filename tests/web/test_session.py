"""The session in the browser: an expired access token is refreshed without the person noticing;
a session that cannot be refreshed says so and asks to sign in; signing out ends it."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.web.conftest import PASSWORD, sign_up
from tests.web.helpers import nav

EXPIRED = "Failed to load resource: the server responded with a status of 401"


def test_silent_refresh_then_an_ended_session(open_page, shot) -> None:
    w = open_page()
    page = w.page
    username = sign_up(page)
    ctx = page.context
    # the access cookie is gone (as when it expires): the next request refreshes and goes through
    ctx.clear_cookies(name="thotqen_access")
    nav(page, "Documents")
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    expect(page.get_by_text("No documents yet.")).to_be_visible()
    assert any(c["name"] == "thotqen_access" for c in ctx.cookies())  # a fresh one was set
    expect(page.locator("#banner")).to_be_hidden()
    # every cookie gone (revoked, expired refresh): the page says the session ended
    ctx.clear_cookies()
    nav(page, "Chats")
    expect(page.get_by_role("status").filter(has_text="Your session has ended")).to_be_visible()
    page.get_by_role("heading", name="Sign in to Thotqen").wait_for()
    shot(page, "desktop-14-session-ended")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Chats").wait_for()
    # a reload keeps the session (the cookies), and signing out ends it
    page.reload()
    page.get_by_role("heading", name="Chats").wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in to Thotqen").wait_for()
    page.goto("/#/documents")
    page.get_by_role("heading", name="Sign in to Thotqen").wait_for()
    assert page.request.get("/api/session").status == 401
    w.clean(allowed=lambda e: EXPIRED in e)


def test_keyboard_only(open_page) -> None:
    """Sign up, start a chat and ask with the keyboard alone; focus is always visible."""
    w = open_page()
    page = w.page
    sign_up(page)
    # a new view moves focus to its heading, so a screen reader starts there
    assert page.evaluate("document.activeElement.textContent") == "Chats"
    page.reload()
    page.get_by_role("heading", name="Chats").wait_for()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(15):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "New chat":
            break
    else:
        raise AssertionError("New chat cannot be reached with Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), outline
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "new-title"
    page.keyboard.type("Typed chat")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Typed chat").wait_for()
    assert page.evaluate("document.activeElement.id") == "question"
    page.keyboard.type("What was Aurora Widgets' total revenue in fiscal 2023?")
    page.keyboard.press("Enter")
    expect(page.locator(".messages .msg-nodata")).to_be_visible(timeout=120_000)
    # Escape closes a dialog and gives focus back
    page.get_by_role("button", name="Delete", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="Delete “Typed chat”?")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="Delete “Typed chat”?")).to_be_hidden()
    w.clean()


def test_a_page_left_before_it_loaded_never_draws_over_the_next(open_page) -> None:
    """The chats page's requests are held while the person moves on to Settings; when they answer at
    last, the chats page they left must not appear over (or under) Settings (main.js render)."""
    w = open_page()
    page = w.page
    sign_up(page)
    page.get_by_role("heading", name="Chats").first.wait_for()
    held: list[Any] = []

    def hold(route: Any) -> None:  # not answered until released below
        held.append(route)

    page.route("**/api/chats", hold)
    nav(page, "Documents")
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    page.evaluate("location.hash = '#/chats'")
    for _ in range(100):  # the chats page asked for its chats
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the chats page never asked for /api/chats"
    nav(page, "Settings")
    page.get_by_role("heading", name="Settings", exact=True).wait_for()
    for route in held:
        route.continue_()
    page.unroute("**/api/chats")
    page.wait_for_timeout(1000)  # the chats page's own requests answer and it finishes drawing
    expect(page.locator(".chats-layout")).to_have_count(0)
    expect(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
    w.clean()
