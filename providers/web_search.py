"""Web search behind one interface: Tavily when TAVILY_API_KEY is set, else DuckDuckGo (ddgs).

    WebSearch(settings)                 (runtime.py builds the process's one)
    WebSearch.search(query, k=5) -> list[{"title", "url", "content"}]
    WebSearch.last_failures      -> [(backend, reason), ...] of the latest search

Each backend call is cut off after WEB_SEARCH_TIMEOUT_S; a failing backend hands over to the
next. When every backend fails (offline, rate-limited) the result is an empty list and the
reasons are logged and kept in `last_failures`: web search is a corrective step, never a
reason for a question to fail. A backend that failed is not tried again for WEB_SEARCH_RETRY_S, so
an offline install does not spend a cut-off on every question: while none can be tried, `available`
is false and the graph skips the web round at once.

No egress unless asked: web search is on only with TAVILY_API_KEY or WEB_SEARCH=true set by the
operator (Settings.web_search_allowed); WEB_SEARCH=false turns it off even with a key. A run's own
`web_search` knob can narrow this, never widen it.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from providers.llm.cutoff import run_with_cutoff
from providers.llm.errors import describe

if TYPE_CHECKING:
    from settings import Settings

log = logging.getLogger(__name__)


class WebResult(TypedDict):
    title: str
    url: str
    content: str


class WebSearch:
    def __init__(self, settings: Settings) -> None:
        key = settings.web.tavily_api_key.get_secret_value().strip() if settings.web.tavily_api_key else ""
        self.enabled = settings.web_search_allowed  # no egress unless a key or the operator asks for it
        self.timeout_s = settings.web.timeout_s
        self._tavily_key = key
        self._tavily_url = settings.web.tavily_base_url
        self._ddgs_backend = settings.web.ddgs_backend
        self.backends = (["tavily"] if key else []) + ["duckduckgo"]
        self.retry_s = settings.web.retry_s
        self.last_failures: list[tuple[str, str]] = []
        self._down_until: dict[str, float] = {}

    def _up(self) -> list[str]:
        now = time.monotonic()
        return [b for b in self.backends if self._down_until.get(b, 0.0) <= now]

    @property
    def available(self) -> bool:
        """Whether a search may find anything: on, and some backend not failed within WEB_SEARCH_RETRY_S."""
        return self.enabled and bool(self._up())

    def search(self, query: str, k: int = 5) -> list[WebResult]:
        self.last_failures = []
        if not self.enabled or not query.strip():
            return []
        for backend in self._up():
            fn = self._tavily if backend == "tavily" else self._duckduckgo
            try:
                results = run_with_cutoff(partial(fn, query, k), self.timeout_s, f"web-{backend}")
            except Exception as exc:  # any failure hands over to the next backend
                self.last_failures.append((backend, describe(exc)))
                self._down_until[backend] = time.monotonic() + self.retry_s
                log.warning("web search via %s failed: %s (not tried again for %.0f s)", backend, describe(exc),
                            self.retry_s)
                continue
            return results[:k]
        return []

    def _tavily(self, query: str, k: int) -> list[WebResult]:
        from tavily import TavilyClient

        client = TavilyClient(api_key=self._tavily_key, api_base_url=self._tavily_url)
        data: dict[str, Any] = client.search(query, max_results=k, timeout=self.timeout_s)
        return [WebResult(title=str(r.get("title", "")), url=str(r.get("url", "")),
                          content=str(r.get("content", ""))) for r in data.get("results", [])]

    def _duckduckgo(self, query: str, k: int) -> list[WebResult]:
        from ddgs import DDGS

        rows = DDGS(timeout=max(1, int(self.timeout_s))).text(query, max_results=k, backend=self._ddgs_backend)
        return [WebResult(title=str(r.get("title", "")), url=str(r.get("href", "")),
                          content=str(r.get("body", ""))) for r in rows or []]
