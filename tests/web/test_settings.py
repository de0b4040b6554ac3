"""Settings in the browser: an API key made on the page is shown once, works as a bearer against the
API, is listed by its prefix only, and stops working when revoked on the page."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.web.conftest import sign_up
from tests.web.helpers import accessibility_problems, nav


def test_api_keys_on_the_settings_page(open_page, web_live, shot) -> None:
    w = open_page()
    page = w.page
    username = sign_up(page)
    nav(page, "Settings")
    page.get_by_role("heading", name="API keys").wait_for()
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    page.get_by_label("Name").fill("Laptop agent")
    page.get_by_label("Ingest: upload and change documents and collections").uncheck()
    page.get_by_label("Expires").select_option("30")
    page.get_by_role("button", name="Create key").click()
    field = page.get_by_label("The new key")
    expect(field).to_be_visible()
    key = field.input_value()
    assert key.startswith("thq_") and len(key) == 47
    expect(page.get_by_text("will not be shown again")).to_be_visible()
    row = page.locator("table.keys tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Laptop agent")
    expect(row).to_contain_text("read, ask")
    expect(row).to_contain_text(key[:12])
    assert key not in page.locator("table.keys").inner_text()
    shot(page, "desktop-33-api-keys")
    assert not accessibility_problems(page)

    with httpx.Client(base_url=web_live.url, headers={"Authorization": f"Bearer {key}"}) as api:
        me = api.get("/api/auth/me")
        assert me.status_code == 200 and me.json()["username"] == username
        assert api.post("/api/collections", json={"name": "by a key"}).status_code == 403  # no ingest scope
    page.reload()  # the key is gone from the page: only its prefix is listed
    page.get_by_role("heading", name="API keys").wait_for()
    expect(page.get_by_label("The new key")).to_have_count(0)
    expect(page.locator("table.keys tbody tr")).to_contain_text("Laptop agent")

    page.get_by_role("button", name="Revoke Laptop agent").click()
    page.get_by_role("button", name="Revoke", exact=True).click()
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    with httpx.Client(base_url=web_live.url, headers={"Authorization": f"Bearer {key}"}) as api:
        assert api.get("/api/auth/me").status_code == 401
    w.clean()


def test_a_key_without_a_scope_is_refused_on_the_page(open_page, shot) -> None:
    w = open_page(phone=True)
    page = w.page
    sign_up(page)
    page.goto("/#/settings")
    page.get_by_role("heading", name="API keys").wait_for()
    page.get_by_label("Name").fill("nothing allowed")
    for label in ("Read", "Ask", "Ingest"):
        page.get_by_label(label, exact=False).first.uncheck()
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("alert")).to_contain_text("at least one")
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    shot(page, "phone-10-api-keys-refused")
    w.clean()
