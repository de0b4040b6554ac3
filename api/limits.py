"""Login and signup limits kept in Postgres (they hold across restarts and processes): 429 + Retry-After;
`Rate`, a rolling per-key rate kept in the process (the edge's large bodies per account).

The hourly question limit is answering/accounting.py's (one path for every way to ask)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque

from fastapi import HTTPException

from settings import Settings
from storage import accounts
from storage.db import Database


def too_many(detail: str, retry_after_s: float) -> HTTPException:
    return HTTPException(429, detail, headers={"Retry-After": str(max(1, math.ceil(retry_after_s)))})


def check_login_ip(db: Database, settings: Settings, ip: str) -> None:
    with db.connection() as conn:
        wait = accounts.ip_retry_after_s(conn, ip=ip, limit=settings.login.ip_limit,
                                         window_s=settings.login.ip_window_s)
    if wait:
        raise too_many("too many login or signup attempts from this address; try again later", wait)


class Rate:
    """At most `limit` per rolling `window_s` per key (events, or an amount such as megabytes), counted
    in this process; `keys` bound how many keys are remembered (the least recently seen go first).
    Only on the event loop: no lock."""

    def __init__(self, limit: float, window_s: float = 60.0, keys: int = 10_000) -> None:
        self.limit, self.window_s, self.keys = limit, window_s, keys
        self._seen: OrderedDict[str, deque[tuple[float, float]]] = OrderedDict()

    def _window(self, key: str, now: float) -> deque[tuple[float, float]]:
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = deque()
            while len(self._seen) > self.keys:
                self._seen.popitem(last=False)
        self._seen.move_to_end(key)
        while seen and seen[0][0] <= now - self.window_s:
            seen.popleft()
        return seen

    def take(self, key: str, amount: float = 1.0) -> float:
        """0 when `amount` fits in the key's window (it is counted), else the seconds until it would.
        An amount over the whole limit counts as the limit (it fits an empty window); 0 asks only
        whether the window has room left."""
        now = time.monotonic()
        seen = self._window(key, now)
        amount = min(amount, self.limit)
        used = sum(a for _, a in seen)
        if used + amount > self.limit or (amount == 0 and used >= self.limit):
            for at, a in seen:  # the oldest leave first: when has enough left?
                used -= a
                if used + amount <= self.limit and (amount or used < self.limit):
                    return max(0.001, at + self.window_s - now)
            return self.window_s
        if amount:
            seen.append((now, amount))
        return 0.0

    def add(self, key: str, amount: float) -> None:
        """Count `amount` whatever the window holds (what was used, learned only afterwards)."""
        now = time.monotonic()
        self._window(key, now).append((now, min(amount, self.limit)))
