"""A chat longer than one page of messages (MESSAGE_PAGE_MAX, here 4) in the real page: it opens
at its latest messages, and "Earlier messages" at the top loads the page before the oldest one
shown, above it, without moving what was on screen, until the first message (before: the page
showed the latest page only, and the rest of the chat could not be reached)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import PHONE, Watched, pages_of, sign_up
from tests.web.helpers import accessibility_problems, csrf

TURNS = 5  # ten messages: two pages of four and one of two
PAGE = 4


@pytest.fixture(scope="module")
def paged_live(start_server, web_settings):
    return start_server(web_settings.model_copy(update={"message_page_max": PAGE}))


@pytest.fixture
def paged_page(browser, paged_live) -> Iterator[Callable[..., Watched]]:
    yield from pages_of(browser, paged_live.url)


def seeded_chat(page: Any, db: Any) -> tuple[str, list[int]]:
    """A chat of TURNS questions and answers, each answer a few paragraphs (the list scrolls), and
    the messages' ids."""
    from storage import chats

    owner = page.request.get("/api/auth/me").json()["id"]
    res = page.request.post("/api/chats", headers={"X-CSRF-Token": csrf(page)}, data={"title": "A long chat"})
    assert res.ok, res.text()
    chat_id = res.json()["id"]
    ids = []
    with db.connection() as conn:
        for t in range(1, TURNS + 1):
            ids.append(chats.add_message(conn, owner_id=owner, chat_id=uuid.UUID(chat_id), role="user",
                                         content=f"Question {t}"))
            body = "\n\n".join(f"Answer {t}, paragraph {p}: " + "the figures of the year, line by line. " * 6
                               for p in range(1, 4))
            ids.append(chats.add_message(conn, owner_id=owner, chat_id=uuid.UUID(chat_id), role="assistant",
                                         content=body, meta={"cited": [1]}))
    return chat_id, ids


def test_a_long_chat_opens_at_its_end_and_loads_earlier_pages_in_place(paged_page, db, shot) -> None:
    w = paged_page()
    page = w.page
    sign_up(page)
    chat_id, ids = seeded_chat(page, db)
    page.goto(f"/#/chats/{chat_id}")
    messages = page.locator(".messages > li.msg")
    expect(messages).to_have_count(PAGE)
    expect(messages.last).to_contain_text("Answer 5, paragraph 3")
    expect(messages.first).to_have_text("Question 4")
    earlier = page.get_by_role("button", name="Earlier messages")
    expect(earlier).to_be_visible()  # at the top, once the list is scrolled up to it

    page.evaluate("document.querySelector('.messages').scrollTop = 0")
    anchor = page.locator(".messages > li.msg-user").get_by_text("Question 4", exact=True)  # the oldest shown
    top = anchor.bounding_box()["y"]
    earlier.click()
    expect(messages).to_have_count(2 * PAGE)
    expect(messages.first).to_have_text("Question 2")
    assert abs(anchor.bounding_box()["y"] - top) < 2, (top, anchor.bounding_box())  # what was read stays put
    assert page.evaluate("document.querySelector('.messages').scrollTop") > 0
    page.evaluate("document.querySelector('.messages').scrollTop = 0")  # up to the next page's button
    expect(earlier).to_be_in_viewport()
    shot(page, "desktop-32-earlier-messages")
    problems = accessibility_problems(page)
    assert not problems, problems
    earlier.click()
    expect(messages).to_have_count(2 * TURNS)
    expect(earlier).to_have_count(0)  # the first message is shown: nothing earlier
    texts = [messages.nth(i).inner_text() for i in range(2 * TURNS)]
    assert [t for t in texts if t.startswith("Question")] == [f"Question {t}" for t in range(1, TURNS + 1)]
    assert [t.split(",")[0] for t in texts if t.startswith("Answer")] == [f"Answer {t}" for t in range(1, TURNS + 1)]

    # a message the sidebar's search found, further back than the latest page: loaded and marked
    page.goto(f"/#/chats/{chat_id}?m={ids[1]}")
    found = page.locator(".messages > li.msg-found")
    expect(found).to_contain_text("Answer 1, paragraph 1")
    expect(found).to_be_in_viewport()
    w.clean()


def test_at_phone_width_earlier_messages_keep_the_page_where_it_was(paged_page, db) -> None:
    """At phone width the page scrolls, not the list: what was on screen stays put there too."""
    w = paged_page(phone=True)
    page = w.page
    sign_up(page)
    chat_id, _ = seeded_chat(page, db)
    page.goto(f"/#/chats/{chat_id}")
    messages = page.locator(".messages > li.msg")
    expect(messages).to_have_count(PAGE)
    page.evaluate("window.scrollTo(0, 0)")
    anchor = page.locator(".messages > li.msg-user").get_by_text("Question 4", exact=True)
    top = anchor.bounding_box()["y"]
    page.get_by_role("button", name="Earlier messages").click()
    expect(messages.first).to_have_text("Question 2")
    assert abs(anchor.bounding_box()["y"] - top) < 2, (top, anchor.bounding_box())
    assert page.evaluate("window.scrollY") > 0
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scrolling
    w.clean()
