"""Rate limits kept in Postgres (they hold across restarts and server processes): 429 + Retry-After."""

from __future__ import annotations

import math

from fastapi import HTTPException

from settings import Settings
from storage import accounts, query_log
from storage.db import Database


def too_many(detail: str, retry_after_s: float) -> HTTPException:
    return HTTPException(429, detail, headers={"Retry-After": str(max(1, math.ceil(retry_after_s)))})


def check_login_ip(db: Database, settings: Settings, ip: str) -> None:
    with db.connection() as conn:
        wait = accounts.ip_retry_after_s(conn, ip=ip, limit=settings.login_ip_limit,
                                         window_s=settings.login_ip_window_s)
    if wait:
        raise too_many("too many login or signup attempts from this address; try again later", wait)


def check_questions(db: Database, settings: Settings, owner_id: int) -> None:
    with db.connection() as conn:
        wait = query_log.retry_after_s(conn, owner_id=owner_id, limit=settings.questions_per_hour)
    if wait:
        raise too_many(f"hourly question limit reached ({settings.questions_per_hour} per hour)", wait)
