"""Login and signup limits kept in Postgres (they hold across restarts and processes): 429 + Retry-After.

The hourly question limit is answering/accounting.py's (one path for every way to ask)."""

from __future__ import annotations

import math

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
