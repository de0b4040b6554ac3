"""Shared dependencies: the app's services from `app.state`, the authenticated user, the admin check."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from api.security import AuthError, Tokens, User
from settings import Settings
from storage.db import Database

UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


def get_db(request: Request) -> Database:
    return request.app.state.db


def get_tokens(request: Request) -> Tokens:
    return request.app.state.tokens


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "missing bearer token (Authorization: Bearer <access_token>)", headers=UNAUTHORIZED)
    return token.strip()


async def current_user(request: Request) -> User:
    token = bearer_token(request)
    tokens: Tokens = request.app.state.tokens
    try:
        # Supabase tokens may need a JWKS fetch or a user row: keep the event loop free.
        user = await asyncio.to_thread(tokens.authenticate, token, request.app.state.db)
    except AuthError as exc:
        raise HTTPException(401, str(exc), headers=UNAUTHORIZED) from None
    request.state.user = user  # for the LangServe config modifier and logs
    return user


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
