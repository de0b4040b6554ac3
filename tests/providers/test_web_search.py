"""Web search: Tavily over real HTTP to a local endpoint, then DuckDuckGo, failing fast offline."""

from __future__ import annotations

import socket
import time

import pytest

from providers.web_search import WebSearch
from tests.support.settings import make_settings


@pytest.fixture
def no_ddgs(monkeypatch) -> None:
    """Route ddgs through a closed local port so it fails at once, online or not."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("DDGS_PROXY", f"http://127.0.0.1:{port}")


def test_tavily_results_have_one_shape(fake) -> None:
    tavily = fake("ok", text="page")
    search = WebSearch(make_settings(tavily_api_key="tv-key", tavily_base_url=tavily.url))
    results = search.search("3M capex 2018", k=3)
    assert results == [{"title": f"page {i}", "url": f"https://example.com/{i}",
                        "content": "about 3M capex 2018"} for i in range(3)]
    assert tavily.requests[0].key == "tv-key" and tavily.requests[0].body["max_results"] == 3


def test_tavily_failure_hands_over_and_offline_fails_fast_and_cleanly(fake, no_ddgs) -> None:
    tavily = fake("hang")
    search = WebSearch(make_settings(tavily_api_key="k", tavily_base_url=tavily.url,
                                          web_search_timeout_s=1.0))
    started = time.monotonic()
    assert search.search("anything") == []
    assert time.monotonic() - started < 10.0  # the 1 s timeout and a busy machine's margin, not the 60 s hang
    assert [name for name, _ in search.last_failures] == ["tavily", "duckduckgo"]
    # the cut-off's timeout, or the client's own at the same second (which fires first is the scheduler's)
    assert search.last_failures[0][1].startswith(("timeout", "sdk timeout"))


def test_no_egress_unless_asked(no_ddgs, monkeypatch) -> None:
    """Without a provider key or WEB_SEARCH=true nothing is sent to a search engine (issue 40)."""
    assert not make_settings().web_search_allowed
    silent = WebSearch(make_settings())
    assert not silent.available and silent.search("anything") == [] and silent.last_failures == []
    assert make_settings(tavily_api_key="k").web_search_allowed
    assert not make_settings(tavily_api_key="k", web_search=False).web_search_allowed
    assert not make_settings(tavily_api_key="  ").web_search_allowed
    monkeypatch.setenv("WEB_SEARCH", "true")  # the operator's variable, as the environment gives it
    assert make_settings().web_search_allowed


def test_without_key_only_duckduckgo_and_switch_off(no_ddgs) -> None:
    search = WebSearch(make_settings(web_search=True))
    assert search.backends == ["duckduckgo"]
    assert search.search("anything") == []
    assert search.last_failures and search.last_failures[0][0] == "duckduckgo"
    off = WebSearch(make_settings(web_search=False))
    assert off.search("anything") == [] and off.last_failures == []


def test_a_failed_backend_is_skipped_until_its_retry_time(fake, no_ddgs) -> None:
    # offline: the first search pays the cut-off, the next ones none, and the graph is told (available)
    tavily = fake("hang")
    search = WebSearch(make_settings(tavily_api_key="k", tavily_base_url=tavily.url, web_search_timeout_s=1.0,
                                     web_search_retry_s=300.0))
    assert search.available and search.search("anything") == []
    assert not search.available
    asked = len(tavily.requests)
    assert search.search("again") == [] and search.last_failures == [] and len(tavily.requests) == asked
    search._down_until.clear()  # the retry time passed
    assert search.available
    again = WebSearch(make_settings(web_search=True, web_search_retry_s=0.0))
    assert again.search("anything") == [] and again.available  # 0: every question tries again
