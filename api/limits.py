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
        wait = accounts.ip_retry_after_s(conn, ip=ip, limit=settings.login_ip_limit,
                                         window_s=settings.login_ip_window_s)
    if wait:
        raise too_many("too many login or signup attempts from this address; try again later", wait)


class Rate:
    """At most `limit` events per rolling `window_s` per key, counted in this process; `keys` bound
    how many keys are remembered (the least recently seen go first). Only on the event loop: no lock."""

    def __init__(self, limit: int, window_s: float = 60.0, keys: int = 10_000) -> None:
        self.limit, self.window_s, self.keys = limit, window_s, keys
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, key: str) -> float:
        """0 when the event fits (it is counted), else the seconds until one would."""
        now = time.monotonic()
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = deque()
            while len(self._seen) > self.keys:
                self._seen.popitem(last=False)
        self._seen.move_to_end(key)
        while seen and seen[0] <= now - self.window_s:
            seen.popleft()
        if len(seen) >= self.limit:
            return seen[0] + self.window_s - now
        seen.append(now)
        return 0.0
