"""Browser tests: Debian's Chromium (/usr/bin/chromium, installed by .ci/run) driven by Playwright
for Python, against a live server on the embedded Postgres with the scripted model server.

Without Chromium or Playwright every test here is skipped with the reason in pytest's summary
(and `make test` says so). Each page records console errors and any request that leaves the
server's origin; the tests assert both lists are empty. Screenshots go to THOTQEN_SCREENSHOTS
(`make screenshots` sets docs/screenshots) or to a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.fake_openai import FakeOpenAI
from tests.server.conftest import script, start_server  # noqa: F401 - start_server: a fixture for this package

CHROMIUM = os.environ.get("THOTQEN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery"


def _skip_reason() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"browser tests skipped: no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "browser tests skipped: playwright is not installed (pip install -e '.[dev]')"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _skip_reason()
    if reason:
        for item in items:
            if "tests/web/" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def shots_dir() -> Iterator[Path]:
    target = os.environ.get("THOTQEN_SCREENSHOTS")
    if target:
        path = Path(target)
        path.mkdir(parents=True, exist_ok=True)
        yield path
    else:
        path = Path(tempfile.mkdtemp(prefix="thq-shots-"))
        yield path
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="package")
def web_admin(db) -> str:
    """An admin's name, its account made by the operator (web signup refuses THOTQEN_ADMINS' names)."""
    from tests.server.conftest import operator_account

    name = f"web-admin-{uuid.uuid4().hex[:6]}"
    operator_account(db, name, PASSWORD)
    return name


@pytest.fixture(scope="package")
def web_settings(settings, web_admin: str):
    # 1 MB uploads so the 413 path is cheap to reach; a question limit far away (its own test lowers it)
    return settings.model_copy(update={"upload_max_mb": 1.0, "login_ip_limit": 100_000, "questions_per_hour": 10_000,
                                       "questions_per_minute": 10_000, "thotqen_admins": web_admin, "web_search": False,
                                       "answer_cache": False})


AT_LENGTH = "Answer at length."  # a question ending so is answered with 200 more words (8 s): time to stop it
LONG = " ".join(f"word{i}" for i in range(200))


def web_script(kind: str, prompt: str) -> str:
    """The servers' script; a question that asks for it at length gets a long answer."""
    if kind == "answer" and AT_LENGTH in prompt.rsplit("Question:", 1)[-1]:
        return script(kind, prompt) + " " + LONG + "."  # the filler a sentence of its own: it names no row
    return script(kind, prompt)


@pytest.fixture(scope="package")
def web_llm() -> Iterator[FakeOpenAI]:
    """The scripted model server (its `requests` say what it was asked and whether each stream ran to its end)."""
    fake = FakeOpenAI(web_script, token_delay_s=0.04)
    yield fake
    fake.close()


@pytest.fixture(scope="package")
def parts(runtime, db, embedder, web_llm) -> Iterator[dict[str, Any]]:
    """The servers' parts (tests/server/conftest.py), with the real LLMChain over HTTP to the scripted
    model server, which streams its pieces 40 ms apart so the page can be seen writing the answer
    token by token."""
    from providers.llm import LLMChain
    from providers.reranker import NoReranker
    from tests.support.fakes import FakeWeb
    from tests.support.settings import make_settings

    chain = LLMChain(make_settings(vllm_base_url=f"{web_llm.url}/v1", vllm_model="fake-model", llm_order="vllm"))
    yield {"chain": chain, "embedder": embedder, "reranker": NoReranker(), "web": FakeWeb([]), "database": db,
           "guard": runtime.guard, "screen": runtime.screen}


@pytest.fixture(scope="package")
def web_live(start_server, web_settings):  # noqa: F811
    return start_server(web_settings)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Watched:
    """A page with what it logged as errors and every request that left the server's origin."""

    def __init__(self, page: Any, origin: str) -> None:
        self.page = page
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

        def on_request(req: Any) -> None:
            url = req.url
            if not (url.startswith(origin) or url.startswith("data:") or url.startswith("blob:")):
                self.foreign.append(url)

        page.on("request", on_request)

    def clean(self, allowed: Callable[[str], bool] = lambda _e: False) -> None:
        errors = [e for e in self.errors if not allowed(e)]
        assert not errors, errors
        assert not self.foreign, f"requests left the origin: {self.foreign}"


@pytest.fixture
def open_page(browser, web_live) -> Iterator[Callable[..., Watched]]:
    """open_page(phone=False) -> a Watched page in a fresh context (its own cookies)."""
    yield from pages_of(browser, web_live.url)


def pages_of(browser: Any, url: str) -> Iterator[Callable[..., Watched]]:
    """What a page fixture yields for the server at `url`: open_(phone=False) -> a Watched page in a fresh
    context (its own cookies); every context is closed after the test."""
    contexts = []

    def open_(phone: bool = False) -> Watched:
        ctx = browser.new_context(viewport=PHONE if phone else DESKTOP, device_scale_factor=1,
                                  is_mobile=phone, has_touch=phone, base_url=url)
        ctx.set_default_timeout(60_000)  # a margin for a busy machine: a full run puts 4 workers on 2 cores
        contexts.append(ctx)
        return Watched(ctx.new_page(), url)

    yield open_
    for ctx in contexts:
        ctx.close()


@pytest.fixture
def shot(shots_dir: Path) -> Callable[[Any, str], Path]:
    def take(page: Any, name: str) -> Path:
        path = shots_dir / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return path

    return take


def sign_in(page: Any, username: str, password: str = PASSWORD) -> None:
    """Sign in through the page to an account that exists."""
    page.goto("/#/signin")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Chats").wait_for()


def sign_up(page: Any, username: str | None = None, password: str = PASSWORD) -> str:
    """Sign up through the page; returns the username."""
    username = username or f"web-{uuid.uuid4().hex[:8]}"
    page.goto("/#/signup")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Chats").wait_for()
    return username
