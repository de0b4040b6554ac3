"""Passwords (argon2id), the server's own JWTs, and Supabase Auth tokens mapped to users."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
import time
import uuid
from collections import OrderedDict
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
    csrf: str | None = None  # hash of the CSRF token a cookie session is bound to (api/routes/session.py)
    scopes: frozenset[str] | None = None  # an API key's (api/scopes.py); None: a person's session, all of it
    key_id: str | None = None  # the API key that authenticated the request, if one did
    workspace_id: int | None = None  # that key's workspace, when it is bound to one: it reads that one only


@dataclass(frozen=True)
class Standing:
    """What a user's access tokens are checked against: the token version they must carry (a reused
    refresh token moves it on) and the web sessions signed out (their CSRF hashes) whose tokens
    could still be valid (sql/028_signed_out.sql)."""

    version: int
    ended: frozenset[str] = frozenset()


def read_standing(conn: psycopg.Connection, user_id: int) -> Standing | None:
    """The user's standing as stored now; None when the account no longer exists."""
    version = accounts.token_version(conn, user_id)
    if version is None:
        return None
    return Standing(version, accounts.ended_sessions(conn, user_id))


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
    if settings.tokens.jwt_secret is not None:
        value = settings.tokens.jwt_secret.get_secret_value()
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


class KeptVersions:
    """Users' token versions (their Standing) as last read, each kept `ttl_s` (0: never kept), at most `entries` of them
    (the least recently used go first). What a revocation in another process takes to be seen here:
    up to `ttl_s`; one in this process is seen at once (`forget`). Thread-safe."""

    def __init__(self, ttl_s: float, entries: int) -> None:
        self.ttl_s = ttl_s
        self.entries = entries
        self._kept: OrderedDict[int, tuple[Standing | None, float]] = OrderedDict()
        self._forgets = 0
        self._lock = threading.Lock()

    def get(self, user_id: int) -> tuple[bool, Standing | None]:
        """(whether a fresh value is kept, the version: None when the account no longer exists)."""
        with self._lock:
            kept = self._kept.get(user_id)
            if kept is None or kept[1] <= time.monotonic():
                return False, None
            self._kept.move_to_end(user_id)
            return True, kept[0]

    def stamp(self) -> int:
        """Taken before a read: `put` keeps nothing read across a `forget`."""
        with self._lock:
            return self._forgets

    def put(self, user_id: int, version: Standing | None, read_at: float, stamp: int) -> None:
        """Keep what was read at `read_at` (monotonic, before the read), unless a `forget` came since
        `stamp`: a revocation during the read is not hidden."""
        if self.ttl_s <= 0 or self.entries <= 0:
            return
        with self._lock:
            if self._forgets != stamp:
                return
            self._kept[user_id] = (version, read_at + self.ttl_s)
            self._kept.move_to_end(user_id)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)

    def forget(self, user_id: int) -> None:
        with self._lock:
            self._forgets += 1
            self._kept.pop(user_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._kept)


class Tokens:
    """Issues and checks the server's tokens; verifies Supabase tokens when configured."""

    def __init__(self, settings: Settings, secret: str) -> None:
        self.settings = settings
        self._secret = secret
        self.versions = KeptVersions(settings.tokens.token_version_ttl_s, settings.tokens.token_version_entries)
        # Supabase tokens only with SUPABASE_AUTH: SUPABASE_URL alone (for Storage) accepts none.
        self._supabase = SupabaseVerifier(settings) if settings.supabase.auth else None

    def issue(self, conn: psycopg.Connection, user: User, csrf: str | None = None) -> dict[str, Any]:
        """Access and refresh tokens; `csrf` (a cookie session's CSRF token) is bound into both, hashed."""
        now = datetime.now(UTC)
        bound = {"csrf": csrf_hash(csrf)} if csrf else {}
        version = accounts.token_version(conn, user.id) or 0
        access = jwt.encode({"sub": str(user.id), "name": user.username, "typ": "access", "iss": ISSUER,
                             "ver": version, "iat": now,
                             "exp": now + timedelta(minutes=self.settings.tokens.access_token_minutes), **bound},
                            self._secret, algorithm="HS256")
        jti = uuid.uuid4()
        refresh_exp = now + timedelta(days=self.settings.tokens.refresh_token_days)
        refresh = jwt.encode({"sub": str(user.id), "name": user.username, "typ": "refresh", "iss": ISSUER,
                              "jti": str(jti), "iat": now, "exp": refresh_exp, **bound}, self._secret,
                             algorithm="HS256")
        accounts.store_refresh_token(conn, jti=jti, user_id=user.id, expires_at=refresh_exp)
        return {"access_token": access, "refresh_token": refresh, "token_type": "bearer",
                "expires_in": self.settings.tokens.access_token_minutes * 60}

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

    def own_claims(self, token: str) -> dict[str, Any] | None:
        """An access token of ours, its signature, expiry and type checked (microseconds of CPU, no
        I/O: safe on the event loop); None for a token another issuer (Supabase) signed; AuthError
        for one that is neither."""
        try:
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise AuthError("the token is not valid") from None
        if unverified.get("iss") != ISSUER:
            if self._supabase is None:
                raise AuthError("the token is not valid")
            return None
        return self._decode_own(token, "access")

    @staticmethod
    def claimed_user(claims: dict[str, Any]) -> User:
        return User(int(claims["sub"]), str(claims.get("name") or ""), csrf=claims.get("csrf"))

    @staticmethod
    def check_version(claims: dict[str, Any], current: Standing | None) -> User:
        """The claims' user, unless the account is gone, its tokens were revoked since, or the web
        session the token belongs to signed out (AuthError)."""
        if current is None:
            raise AuthError("the account no longer exists")
        if claims.get("ver") != current.version:  # revoked: a refresh token was reused (it leaked)
            raise AuthError("the token was revoked; log in again")
        if claims.get("csrf") is not None and claims["csrf"] in current.ended:
            raise AuthError("the session was signed out; sign in again")
        return Tokens.claimed_user(claims)

    def authenticate(self, token: str, db: Any) -> User:  # storage.db.Database
        """The user an access token (ours or Supabase's) belongs to, or AuthError. Our tokens are
        checked against the user's token version as stored now (one primary-key read; the server's
        requests go through api/verify.py, which reads it once per user at a time and keeps it briefly)."""
        claims = self.own_claims(token)
        if claims is None:
            return self.supabase_user(token, db)
        with db.connection() as conn:
            current = read_standing(conn, int(claims["sub"]))
        return self.check_version(claims, current)

    def supabase_user(self, token: str, db: Any) -> User:  # storage.db.Database
        if self._supabase is None:
            raise AuthError("the token is not valid")
        return self._supabase.authenticate(token, db)

    def spend_refresh(self, token: str, conn: psycopg.Connection) -> User:
        claims = self._decode_own(token, "refresh")
        if claims.get("csrf") is not None and claims["csrf"] in accounts.ended_sessions(conn, int(claims["sub"])):
            raise AuthError("the session was signed out; sign in again")
        jti = uuid.UUID(str(claims.get("jti")))
        if not accounts.spend_refresh_token(conn, jti=jti, user_id=int(claims["sub"])):
            self.versions.forget(int(claims["sub"]))  # it may have revoked every token: read the version again
            raise AuthError("the refresh token was already used or revoked; log in again")
        return User(int(claims["sub"]), str(claims.get("name") or ""), csrf=claims.get("csrf"))

    def end_session(self, conn: psycopg.Connection, user_id: int, session: str) -> None:
        """Sign out the web session whose tokens carry `session` (their CSRF hash): every one of them
        answers 401 from now on, in this process at once (the kept standing is dropped), in another
        within TOKEN_VERSION_TTL_S; its refresh tokens refresh nothing. Kept as long as a refresh
        token of the session (a copy of the cookie that was not spent) could still be valid."""
        until = datetime.now(UTC) + timedelta(days=self.settings.tokens.refresh_token_days, minutes=1)
        accounts.end_session(conn, user_id=user_id, session=session, until=until)
        self.versions.forget(user_id)

    def refresh_claims(self, token: str) -> dict[str, Any]:
        """A refresh token's claims (signature and expiry checked, not whether it was spent)."""
        return self._decode_own(token, "refresh")


class SupabaseVerifier:
    """Supabase Auth access tokens: HS256 with the project's JWT secret, or ES256/RS256 through its JWKS."""

    def __init__(self, settings: Settings) -> None:
        self.audience = settings.supabase.audience
        self.issuer = settings.supabase.token_issuer
        self.secret = settings.supabase.jwt_secret.get_secret_value() if settings.supabase.jwt_secret else None
        jwks_url = settings.supabase.jwks_url or (
            f"{settings.supabase.url.rstrip('/')}/auth/v1/.well-known/jwks.json" if settings.supabase.url else None)
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

    def authenticate(self, token: str, db: Any) -> User:
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
