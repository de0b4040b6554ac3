"""Shared dependencies: the app's services from `app.state`, the authenticated user, the admin check.

A request authenticates with `Authorization: Bearer <access_token>` (API clients), `Authorization:
Bearer <API key>` (machines, narrowed to the key's scopes: api/scopes.py) or with the web
app's HttpOnly session cookie (api/routes/session.py). A cookie rides along on every request the browser
makes, so a state-changing request it authenticates must also carry the session's CSRF token in
`X-CSRF-Token` (the token is bound into the cookie's JWT) and, when the browser says where it comes
from, this server's own origin.
"""

from __future__ import annotations

import hmac
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from api import scopes
from api.verify import Verifier
from identity.security import AuthError, Tokens, User, csrf_hash
from settings import Settings
from storage.db import Database

UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
ACCESS_COOKIE = "thotqen_access"
REFRESH_COOKIE = "thotqen_refresh"
CSRF_COOKIE = "thotqen_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# Declared for the OpenAPI document (Swagger's Authorize button); the checks are in `authenticate`.
bearer_scheme = HTTPBearer(auto_error=False, scheme_name="bearer", bearerFormat="JWT",
                           description="an access token from POST /api/auth/login or /api/auth/signup, or an "
                                       "API key from POST /api/keys")
cookie_scheme = APIKeyCookie(name=ACCESS_COOKIE, auto_error=False, scheme_name="session_cookie",
                             description="the web app's HttpOnly session cookie (POST /api/session); "
                                         f"state-changing requests also need the `{CSRF_HEADER}` header")


# Starlette's app.state is untyped: each dependency names the type of what server.py put there.
# They are async on purpose: FastAPI runs a plain `def` dependency on its thread pool, a hop through
# the pool (and the interpreter lock) per dependency per request, which under a burst each cost a
# light request more than its own work (docs/protection.md#bounded-work).
async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def get_tokens(request: Request) -> Tokens:
    tokens: Tokens = request.app.state.tokens
    return tokens


def bearer_token(request: Request) -> str | None:
    """The bearer token, None without an Authorization header, 401 for a malformed one."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "missing bearer token (Authorization: Bearer <access_token>)", headers=UNAUTHORIZED)
    return token.strip()


def route_path(request: Request) -> str:
    """The request's path inside this app (behind a proxy's prefix, without it)."""
    path: str = request.scope["path"]
    root: str = request.scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


def same_origin(request: Request) -> bool:
    """False when the browser names another origin (Origin, else Referer); absent headers pass."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source or source == "null":
        return source is None
    # host and port only: behind a TLS proxy the server may see http while the browser says https
    return urlsplit(source).netloc == request.url.netloc


def check_csrf(request: Request, bound: str | None) -> None:
    """403 unless the request carries the CSRF token its cookie session is bound to."""
    given = request.headers.get(CSRF_HEADER) or ""
    if not bound or not given or not hmac.compare_digest(csrf_hash(given), bound):
        raise HTTPException(403, f"missing or wrong {CSRF_HEADER} header: a request authenticated by the "
                                 "session cookie must carry the session's CSRF token")
    if not same_origin(request):
        raise HTTPException(403, "cross-origin request refused")


async def authenticate(request: Request) -> User:
    """The caller, from the bearer header or the session cookie (with the CSRF check); 401/403 otherwise."""
    token = bearer_token(request)
    from_cookie = token is None
    if from_cookie:
        token = request.cookies.get(ACCESS_COOKIE)
    if not token:
        raise HTTPException(401, "not signed in: send Authorization: Bearer <access_token> or sign in on the "
                                 "web page", headers=UNAUTHORIZED)
    if from_cookie and scopes.is_key(token):  # a key is a header, never a cookie a browser sends along
        raise HTTPException(401, "an API key goes in the Authorization header", headers=UNAUTHORIZED)
    verifier: Verifier = request.app.state.verifier
    try:
        # no thread for most requests, and at most one per user at a time (api/verify.py)
        user = await verifier.user(token)
    except AuthError as exc:
        raise HTTPException(401, str(exc), headers=UNAUTHORIZED) from None
    if from_cookie and request.method not in SAFE_METHODS:
        check_csrf(request, user.csrf)
    if refused := scopes.refusal(user, request.method, route_path(request)):
        raise HTTPException(403, refused)
    request.state.user = user  # for the LangServe config modifier and logs
    return user


async def current_user(request: Request,
                       _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)] = None,
                       _cookie: Annotated[str | None, Depends(cookie_scheme)] = None) -> User:
    return await authenticate(request)


async def admin_user(user: Annotated[User, Depends(current_user)], request: Request) -> User:
    if user.username not in request.app.state.settings.admins:
        raise HTTPException(403, "admin only (THOTQEN_ADMINS)")
    return user


def client_ip(request: Request) -> str:
    # uvicorn rewrites client from X-Forwarded-For only for trusted proxies (--forwarded-allow-ips).
    return request.client.host if request.client else "unknown"


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
DbDep = Annotated[Database, Depends(get_db)]
TokensDep = Annotated[Tokens, Depends(get_tokens)]
CurrentUser = Annotated[User, Depends(current_user)]
AdminUser = Annotated[User, Depends(admin_user)]
