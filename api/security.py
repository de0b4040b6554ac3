"""Passwords (argon2id), the server's own JWTs, and Supabase Auth tokens mapped to users."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from settings import Settings, is_placeholder_secret
from storage import accounts

log = logging.getLogger(__name__)

ISSUER = "thotqen"
_hasher = PasswordHasher()  # argon2id with the library's (RFC 9106 low-memory) parameters
# Verified when the username is unknown, so a miss costs as long as a wrong password.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


class AuthError(Exception):
    """A token that does not authenticate; the message is safe to show the caller."""


@dataclass(frozen=True)
class User:
    id: int
    username: str
    source: str = "local"  # local | supabase
    csrf: str | None = None  # hash of the CSRF token a cookie session is bound to (api/session.py)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> tuple[bool, str | None]:
    """(matches, a new hash when the stored one uses outdated parameters)."""
    try:
        _hasher.verify(password_hash or _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return False, None
    if password_hash is None:
        return False, None
    return True, (_hasher.hash(password) if _hasher.check_needs_rehash(password_hash) else None)


def resolve_jwt_secret(settings: Settings) -> str:
    """JWT_SECRET; in development, one generated once and kept (0600) under THOTQEN_HOME."""
    if settings.jwt_secret is not None:
        value = settings.jwt_secret.get_secret_value()
        if not settings.development and is_placeholder_secret(value):
            raise RuntimeError("JWT_SECRET is a placeholder or too short; set a real secret of 32+ characters")
        return value
    if not settings.development:
        raise RuntimeError(
            f"THOTQEN_ENV={settings.thotqen_env} needs JWT_SECRET (32+ random characters); "
            "only development mode generates one"
        )
    path: Path = settings.home / "jwt_secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(48))
        tmp.replace(path)
        log.warning("development mode: generated a JWT secret in %s (set JWT_SECRET in production)", path)
    return path.read_text().strip()


def csrf_hash(token: str) -> str:
    """What a token carries of its session's CSRF token: a leaked JWT does not reveal the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


class Tokens:
    """Issues and checks the server's tokens; verifies Supabase tokens when configured."""

    def __init__(self, settings: Settings, secret: str) -> None:
        self.settings = settings
        self._secret = secret
        # Supabase tokens only with SUPABASE_AUTH: SUPABASE_URL alone (for Storage) accepts none.
        self._supabase = SupabaseVerifier(settings) if settings.supabase_auth else None

    def issue(self, conn: psycopg.Connection, user: User, csrf: str | None = None) -> dict[str, Any]:
        """Access and refresh tokens; `csrf` (a cookie session's CSRF token) is bound into both, hashed."""
        now = datetime.now(UTC)
        bound = {"csrf": csrf_hash(csrf)} if csrf else {}
        version = accounts.token_version(conn, user.id) or 0
        access = jwt.encode({"sub": str(user.id), "name": user.username, "typ": "access", "iss": ISSUER,
                             "ver": version, "iat": now,
                             "exp": now + timedelta(minutes=self.settings.access_token_minutes), **bound},
                            self._secret, algorithm="HS256")
        jti = uuid.uuid4()
        refresh_exp = now + timedelta(days=self.settings.refresh_token_days)
        refresh = jwt.encode({"sub": str(user.id), "name": user.username, "typ": "refresh", "iss": ISSUER,
                              "jti": str(jti), "iat": now, "exp": refresh_exp, **bound}, self._secret,
                             algorithm="HS256")
        accounts.store_refresh_token(conn, jti=jti, user_id=user.id, expires_at=refresh_exp)
        return {"access_token": access, "refresh_token": refresh, "token_type": "bearer",
                "expires_in": self.settings.access_token_minutes * 60}

    def _decode_own(self, token: str, typ: str) -> dict[str, Any]:
        try:
            claims = jwt.decode(token, self._secret, algorithms=["HS256"], issuer=ISSUER,
                                options={"require": ["exp", "sub", "iss"]})
        except jwt.ExpiredSignatureError:
            raise AuthError("the token has expired") from None
        except jwt.PyJWTError:
            raise AuthError("the token is not valid") from None
        if claims.get("typ") != typ:
            raise AuthError(f"expected an {typ} token")
        return claims

    def authenticate(self, token: str, db: Any) -> User:  # noqa: ANN401 - storage.db.Database
        """The user an access token (ours or Supabase's) belongs to, or AuthError. Our tokens are
        checked against the user's token version (one primary-key read per request)."""
        try:
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise AuthError("the token is not valid") from None
        if unverified.get("iss") == ISSUER:
            claims = self._decode_own(token, "access")
            user = User(int(claims["sub"]), str(claims.get("name") or ""), csrf=claims.get("csrf"))
            with db.connection() as conn:
                current = accounts.token_version(conn, user.id)
            if current is None:
                raise AuthError("the account no longer exists")
            if claims.get("ver") != current:  # revoked: a refresh token was reused (it leaked)
                raise AuthError("the token was revoked; log in again")
            return user
        if self._supabase is None:
            raise AuthError("the token is not valid")
        return self._supabase.authenticate(token, db)

    def spend_refresh(self, token: str, conn: psycopg.Connection) -> User:
        claims = self._decode_own(token, "refresh")
        jti = uuid.UUID(str(claims.get("jti")))
        if not accounts.spend_refresh_token(conn, jti=jti, user_id=int(claims["sub"])):
            raise AuthError("the refresh token was already used or revoked; log in again")
        return User(int(claims["sub"]), str(claims.get("name") or ""), csrf=claims.get("csrf"))

    def refresh_claims(self, token: str) -> dict[str, Any]:
        """A refresh token's claims (signature and expiry checked, not whether it was spent)."""
        return self._decode_own(token, "refresh")


class SupabaseVerifier:
    """Supabase Auth access tokens: HS256 with the project's JWT secret, or ES256/RS256 through its JWKS."""

    def __init__(self, settings: Settings) -> None:
        self.audience = settings.supabase_audience
        self.issuer = settings.supabase_token_issuer
        self.secret = settings.supabase_jwt_secret.get_secret_value() if settings.supabase_jwt_secret else None
        jwks_url = settings.supabase_jwks_url or (
            f"{settings.supabase_url.rstrip('/')}/auth/v1/.well-known/jwks.json" if settings.supabase_url else None)
        # PyJWKClient caches the key set and refetches on an unknown key id (key rotation).
        self.jwks = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=600, timeout=5) if jwks_url else None
        self._users: dict[str, int] = {}
        self._lock = threading.Lock()

    def claims(self, token: str) -> dict[str, Any]:
        try:
            alg = jwt.get_unverified_header(token).get("alg")
            if alg == "HS256":
                if not self.secret:
                    raise AuthError("the token is not valid")
                key: Any = self.secret
            elif alg in ("ES256", "RS256") and self.jwks is not None:
                key = self.jwks.get_signing_key_from_jwt(token).key
            else:
                raise AuthError("the token is not valid")
            return jwt.decode(token, key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                              options={"require": ["exp", "sub", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise AuthError("the token has expired") from None
        except jwt.PyJWKClientError:
            log.warning("Supabase JWKS unavailable or key unknown")
            raise AuthError("the token could not be verified") from None
        except jwt.PyJWTError:
            raise AuthError("the token is not valid") from None

    def authenticate(self, token: str, db: Any) -> User:  # noqa: ANN401
        claims = self.claims(token)
        sub = str(claims["sub"])
        name = str(claims.get("email") or f"supabase-{sub[:8]}")
        with self._lock:
            user_id = self._users.get(sub)
        if user_id is None:
            with db.connection() as conn:
                user_id = accounts.get_or_create_external_user(conn, external_id=f"supabase:{sub}", username=name)
            with self._lock:
                self._users[sub] = user_id
        return User(user_id, name, "supabase")
