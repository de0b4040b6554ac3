"""The web app's session: the same accounts and tokens as /api/auth, kept in cookies the page's
JavaScript cannot read.

- `thotqen_access`: the access token; HttpOnly, SameSite=Strict, every path.
- `thotqen_refresh`: the single-use refresh token; HttpOnly, SameSite=Strict, only /api/session.
- `thotqen_csrf`: a random token the page CAN read and echoes in `X-CSRF-Token` on every
  state-changing request (double submit); both JWTs carry its hash, so a token set by anyone else
  does not match.
Cookies are `Secure` over HTTPS and always outside development. The bodies never hold a token.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response

from api.deps import (
    ACCESS_COOKIE,
    CSRF_COOKIE,
    CSRF_HEADER,
    REFRESH_COOKIE,
    UNAUTHORIZED,
    CurrentUser,
    DbDep,
    SettingsDep,
    TokensDep,
    check_csrf,
)
from api.routes.auth import LoginIn, SignupIn, check_login, create_account
from api.schemas import SessionOut, error
from identity.security import AuthError, User
from settings import Settings
from storage import accounts

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/session", tags=["session"])
REFRESH_PATH = "/api/session"


def _user_out(user: User, settings: Settings) -> dict[str, Any]:
    return {"id": user.id, "username": user.username, "source": user.source, "admin": user.username in settings.admins}


def _secure(request: Request, settings: Settings) -> bool:
    # plain-HTTP development (http://127.0.0.1) would drop a Secure cookie; production must use HTTPS
    return request.url.scheme == "https" or not settings.development


def set_cookies(response: Response, request: Request, settings: Settings, tokens: dict[str, Any], csrf: str) -> None:
    secure = _secure(request, settings)
    keep_s = settings.tokens.refresh_token_days * 86400
    response.set_cookie(ACCESS_COOKIE, tokens["access_token"], max_age=int(tokens["expires_in"]), path="/",
                        httponly=True, samesite="strict", secure=secure)
    response.set_cookie(REFRESH_COOKIE, tokens["refresh_token"], max_age=keep_s, path=REFRESH_PATH,
                        httponly=True, samesite="strict", secure=secure)
    response.set_cookie(CSRF_COOKIE, csrf, max_age=keep_s, path="/", httponly=False, samesite="strict", secure=secure)


def clear_cookies(response: Response, request: Request, settings: Settings) -> None:
    secure = _secure(request, settings)
    for name, path in ((ACCESS_COOKIE, "/"), (REFRESH_COOKIE, REFRESH_PATH), (CSRF_COOKIE, "/")):
        response.delete_cookie(name, path=path, httponly=name != CSRF_COOKIE, samesite="strict", secure=secure)


def _started(response: Response, request: Request, settings: Settings, tokens: dict[str, Any], csrf: str,
             user: User) -> dict[str, Any]:
    set_cookies(response, request, settings, tokens, csrf)
    response.headers["Cache-Control"] = "no-store"
    return {"user": _user_out(user, settings), "csrf_token": csrf, "expires_in": tokens["expires_in"]}


@router.post("", response_model=SessionOut, responses={
    401: error("wrong username or password"),
    429: error("locked after repeated failures, or too many attempts from this IP; see Retry-After")})
def sign_in(body: LoginIn, request: Request, response: Response, db: DbDep, settings: SettingsDep,
            tokens: TokensDep) -> dict[str, Any]:
    """Sign in: sets the session cookies (the body holds no token)."""
    csrf = secrets.token_urlsafe(32)
    out = check_login(body, request, db, settings, tokens, csrf)
    user = tokens.authenticate(out["access_token"], db)
    return _started(response, request, settings, out, csrf, user)


@router.post("/signup", response_model=SessionOut, status_code=201, responses={
    409: error("username taken"), 429: error("too many attempts from this IP")})
def sign_up(body: SignupIn, request: Request, response: Response, db: DbDep, settings: SettingsDep,
            tokens: TokensDep) -> dict[str, Any]:
    """Create an account and sign in."""
    csrf = secrets.token_urlsafe(32)
    out = create_account(body, request, db, settings, tokens, csrf)
    user = tokens.authenticate(out["access_token"], db)
    return _started(response, request, settings, out, csrf, user)


@router.get("", response_model=SessionOut, responses={
    401: error("not signed in, or the access token expired (refresh it)")})
def who(user: CurrentUser, request: Request, response: Response, settings: SettingsDep) -> dict[str, Any]:
    """The signed-in user and the session's CSRF token."""
    response.headers["Cache-Control"] = "no-store"
    return {"user": _user_out(user, settings), "csrf_token": request.cookies.get(CSRF_COOKIE) or ""}


@router.post("/refresh", response_model=SessionOut, responses={
    401: error("no session, or its refresh token expired, was used or revoked: sign in again"),
    403: error(f"missing or wrong {CSRF_HEADER}")})
def refresh(request: Request, response: Response, db: DbDep, settings: SettingsDep,
            tokens: TokensDep) -> Response | dict[str, Any]:
    """New session cookies for the refresh cookie (single use), without asking for the password."""
    raw = request.cookies.get(REFRESH_COOKIE)
    if not raw:
        raise HTTPException(401, "the session has ended; sign in again", headers=UNAUTHORIZED)
    try:
        claims = tokens.refresh_claims(raw)
    except AuthError:
        return _ended(request, settings)
    check_csrf(request, claims.get("csrf"))
    csrf = request.headers.get(CSRF_HEADER, "")
    with db.connection() as conn:
        try:
            user = tokens.spend_refresh(raw, conn)
        except AuthError:
            return _ended(request, settings)
        if accounts.get_user(conn, user.id) is None:
            return _ended(request, settings)
        out = tokens.issue(conn, user, csrf)
    return _started(response, request, settings, out, csrf, user)


def _ended(request: Request, settings: Settings) -> Response:
    """401 that also clears the cookies, so the page asks for a sign-in instead of retrying."""
    from fastapi.responses import JSONResponse

    res = JSONResponse({"detail": "the session has ended; sign in again"}, status_code=401, headers=UNAUTHORIZED)
    clear_cookies(res, request, settings)
    return res


@router.delete("", status_code=204, responses={403: error(f"missing or wrong {CSRF_HEADER}")})
def sign_out(request: Request, db: DbDep, settings: SettingsDep, tokens: TokensDep) -> Response:
    """Sign out: the session ends on the server (its access token answers 401 from now on, wherever
    a copy of it is), its refresh token is spent and the cookies cleared."""
    raw = request.cookies.get(REFRESH_COOKIE)
    claims = None
    if raw:
        try:
            claims = tokens.refresh_claims(raw)
        except AuthError:
            claims = None
    if claims is None:  # no refresh cookie (or an expired one): the access cookie names the session
        with contextlib.suppress(AuthError):
            claims = tokens.own_claims(request.cookies.get(ACCESS_COOKIE) or "")
    if claims is not None:
        check_csrf(request, claims.get("csrf"))  # 403 unless the session's own page asks
        with db.connection() as conn:
            if raw and claims.get("typ") == "refresh":
                # already spent: signing out still ends the session and clears the cookies
                with contextlib.suppress(AuthError):
                    tokens.spend_refresh(raw, conn)
            tokens.end_session(conn, int(claims["sub"]), str(claims["csrf"]))
    res = Response(status_code=204)
    clear_cookies(res, request, settings)
    return res
