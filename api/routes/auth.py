"""Accounts: signup, login (lockout after repeated failures), token refresh, who am I."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel

from api import limits
from api.deps import CurrentUser, DbDep, SettingsDep, TokensDep, client_ip
from api.schemas import TokenOut, UserOut, error
from api.text import LoginName, LoginPassword, Password, RefreshToken, Username
from identity.security import AuthError, Tokens, User, hash_password, verify_password
from settings import Settings
from storage import accounts
from storage.db import Database

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/auth", tags=["auth"])

class SignupIn(BaseModel):
    username: Username
    password: Password


class LoginIn(BaseModel):
    username: LoginName
    password: LoginPassword


class RefreshIn(BaseModel):
    refresh_token: RefreshToken


@router.post("/signup", response_model=TokenOut, status_code=201,
             responses={409: error("username taken"), 429: error("too many attempts")})
def signup(body: SignupIn, request: Request, db: DbDep, settings: SettingsDep, tokens: TokensDep) -> dict[str, Any]:
    return create_account(body, request, db, settings, tokens)


def create_account(body: SignupIn, request: Request, db: Database, settings: Settings, tokens: Tokens,
                   csrf: str | None = None) -> dict[str, Any]:
    """The signup, shared with the web session (api/routes/session.py), which binds a CSRF token into the tokens."""
    ip = client_ip(request)
    limits.check_login_ip(db, settings, ip)
    if body.username.strip().lower() in settings.admin_names:
        # THOTQEN_ADMINS: whoever signed the name up first became the admin; the operator makes it
        raise HTTPException(409, "that username is reserved for an admin account the operator creates")
    if body.username.strip().lower() in settings.reserved_names:
        # the operator's command-line users: whoever took the name would read what they ingest
        raise HTTPException(409, "that username is reserved for the command line")
    password_hash = hash_password(body.password)
    with db.connection() as conn:
        accounts.record_login_attempt(conn, username="", ip=ip, success=True)  # counts toward the IP limit only
        with conn.transaction():
            user_id = accounts.create_password_user(conn, username=body.username, password_hash=password_hash)
            if user_id is None:
                raise HTTPException(409, "that username is taken")
            out = tokens.issue(conn, User(user_id, body.username), csrf)
    log.info("signup user_id=%s", user_id)
    return out


@router.post("/login", response_model=TokenOut,
             responses={401: error("wrong username or password"),
                        429: error("locked after repeated failures, or too many attempts from this IP")})
def login(body: LoginIn, request: Request, db: DbDep, settings: SettingsDep, tokens: TokensDep) -> dict[str, Any]:
    return check_login(body, request, db, settings, tokens)


def check_login(body: LoginIn, request: Request, db: Database, settings: Settings, tokens: Tokens,
                csrf: str | None = None) -> dict[str, Any]:
    """The login with its lockouts, shared with the web session (api/routes/session.py)."""
    ip = client_ip(request)
    limits.check_login_ip(db, settings, ip)
    window_s = settings.login.lock_minutes * 60
    with db.connection() as conn:
        # per (address, account): a stranger's failures lock the stranger out, never the owner elsewhere
        locked = accounts.lock_remaining_s(conn, username=body.username, ip=ip,
                                           max_failures=settings.login.max_failures, window_s=window_s)
        if locked:
            accounts.record_login_attempt(conn, username="", ip=ip, success=False)  # IP limit only
            raise limits.too_many(
                f"sign-in to this account from this address is locked for {settings.login.lock_minutes} "
                f"minutes after {settings.login.max_failures} failed logins", locked)
        # guessing from many addresses: slowed for places the account never signed in from
        slowed = 0.0 if accounts.known_place(conn, username=body.username, ip=ip) else accounts.slow_remaining_s(
            conn, username=body.username, max_failures=settings.login.account_max_failures, window_s=window_s,
            delay_s=settings.login.account_delay_s)
        if slowed:
            accounts.record_login_attempt(conn, username="", ip=ip, success=False)  # IP limit only
            raise limits.too_many("this account has had many failed logins: one attempt at a time from a new "
                                  "address; try again shortly", slowed)
        found = accounts.credentials(conn, body.username)
    # argon2 is slow on purpose: outside the connection, and a miss verifies a dummy hash (same timing)
    ok, new_hash = verify_password(body.password, found[1] if found else None)
    with db.connection() as conn:
        accounts.record_login_attempt(conn, username=body.username, ip=ip, success=ok and found is not None)
        if not ok or found is None:
            log.info("failed login from %s", ip)
            raise HTTPException(401, "wrong username or password", headers={"WWW-Authenticate": "Bearer"})
        if new_hash:
            accounts.set_password_hash(conn, user_id=found[0], password_hash=new_hash)
        return tokens.issue(conn, User(found[0], body.username), csrf)


@router.post("/refresh", response_model=TokenOut, responses={401: error("invalid or spent refresh token")})
def refresh(body: RefreshIn, db: DbDep, tokens: TokensDep) -> dict[str, Any]:
    """A new access and refresh token; the refresh token given is spent (single use)."""
    with db.connection() as conn:
        try:
            user = tokens.spend_refresh(body.refresh_token, conn)
        except AuthError as exc:
            raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
        if accounts.get_user(conn, user.id) is None:
            raise HTTPException(401, "the account no longer exists")
        return tokens.issue(conn, user)


@router.get("/me", response_model=UserOut)
async def me(user: CurrentUser, settings: SettingsDep) -> dict[str, Any]:  # async: no thread, no I/O
    return {"id": user.id, "username": user.username, "source": user.source,
            "admin": user.username in settings.admins}
