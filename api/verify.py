"""A request's access token, verified without a queue that one user can fill (issue 26).

Every authenticated request used to verify its token on asyncio's default thread pool, one
first-come queue for all users: an attacker's tens of requests a second, refused and admitted
alike, each queued a database read there ahead of everyone else's sign-in, and the event loop
itself waited on the lock that every thread pool shares while the attackers' threads started
theirs (evals/results/burst.md). Here:

- the token's signature, expiry and type are checked on the event loop (no I/O, microseconds), so a
  forged, expired or garbage token never reaches a thread;
- the user's token version and signed-out sessions (what revocation changes) are read at most once
  per user at a time: every request of that user waits on the one read in flight, so a user holds at most one place in
  the pool's queue however many requests they send;
- the version read is kept TOKEN_VERSION_TTL_S (identity/security.py's KeptVersions), so most requests
  need no thread at all;
- those reads run on threads of their own (`READ_THREADS`), not asyncio's default pool, where every
  progress stream's polls, /rag's admissions and a dozen other kinds of work queue first-come:
  under the burst the read every TOKEN_VERSION_TTL_S waited there behind them, the tail of an
  unrelated `GET /api/auth/me` (evals/results/burst_profile.md);
- a token whose signature was checked is kept (at most TOKEN_VERSION_ENTRIES of them, the least
  recently used go first), so a client sending the same token again costs a dictionary lookup and
  an expiry comparison: decoding and checking it again (PyJWT, twice a request) was an eighth of the
  event loop's time under the burst (evals/results/burst_profile.md).

Supabase tokens go to a thread as before (their key set may need fetching). API keys (api/scopes.py)
are read on the same threads every time, one read per key at a time, never kept: revoking one
takes effect on the next request in every process.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from api import scopes
from identity.security import AuthError, Standing, Tokens, User, read_standing
from storage.db import Database

READ_THREADS = 2  # token-version reads at once: one per user at a time, each an indexed lookup


class Verifier:
    """Turns access tokens into users for one event loop (the app's; see the module's docstring)."""

    def __init__(self, tokens: Tokens, db: Database) -> None:
        self.tokens = tokens
        self.db = db
        self._reading: dict[int, asyncio.Future[Standing | None]] = {}
        self._keys: dict[str, asyncio.Future[User]] = {}  # API key -> its lookup in flight
        self.reads = 0  # version reads started (a thread each)
        self._checked: OrderedDict[str, dict[str, Any]] = OrderedDict()  # token -> its verified claims
        self.entries = tokens.versions.entries
        self._pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="verify")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def user(self, token: str) -> User:
        """The token's user, or identity.security.AuthError."""
        if scopes.is_key(token):
            return await self.key_user(token)
        claims = self.claims(token)
        if claims is None:
            return await asyncio.to_thread(self.tokens.supabase_user, token, self.db)
        return self.tokens.check_version(claims, await self.version(int(claims["sub"])))

    def claims(self, token: str) -> dict[str, Any] | None:
        """Tokens.own_claims, kept per token (only on the event loop: no lock). A kept token's expiry is
        compared again on every use; what was kept was signed by this server's secret, which does not
        change while it runs."""
        kept = self._checked.get(token)
        if kept is not None:
            if kept["exp"] <= time.time():
                del self._checked[token]
                raise AuthError("the token has expired")
            self._checked.move_to_end(token)
            return kept
        claims = self.tokens.own_claims(token)
        if claims is not None and self.entries > 0:
            self._checked[token] = claims
            while len(self._checked) > self.entries:
                self._checked.popitem(last=False)
        return claims

    async def key_user(self, key: str) -> User:
        """An API key's user: requests with the same key share the lookup in flight (their place in the
        threads' queue is one), each lookup is fresh (no revocation hidden)."""
        if len(key) > scopes.MAX_LENGTH:  # no thread for garbage
            raise AuthError("the API key is not valid")
        reading = self._keys.get(key)
        if reading is None:
            read = functools.partial(contextvars.copy_context().run, self._key, key)
            reading = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(self._pool, read))
            self._keys[key] = reading
            reading.add_done_callback(lambda _: self._keys.pop(key, None))
        return await asyncio.shield(reading)

    def _key(self, key: str) -> User:
        with self.db.connection() as conn:
            return scopes.user_for_key(conn, key)

    async def version(self, user_id: int) -> Standing | None:
        fresh, version = self.tokens.versions.get(user_id)
        if fresh:
            return version
        reading = self._reading.get(user_id)
        if reading is None:
            reading = asyncio.ensure_future(self._read(user_id))
            self._reading[user_id] = reading
            reading.add_done_callback(lambda _: self._reading.pop(user_id, None))
        # shielded: one waiter leaving (its client gone) does not call off the others' read
        return await asyncio.shield(reading)

    async def _read(self, user_id: int) -> Standing | None:
        self.reads += 1
        read_at, stamp = time.monotonic(), self.tokens.versions.stamp()
        read = functools.partial(contextvars.copy_context().run, self._current, user_id)  # the request's trace
        version = await asyncio.get_running_loop().run_in_executor(self._pool, read)
        self.tokens.versions.put(user_id, version, read_at, stamp)
        return version

    def _current(self, user_id: int) -> Standing | None:
        with self.db.connection() as conn:
            return read_standing(conn, user_id)
