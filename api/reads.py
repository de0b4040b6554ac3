"""Light reads on the event loop, over connections of their own (issue 26).

`GET /api/documents` was a plain `def` endpoint: FastAPI ran it on its thread pool (40 threads for
every sync route and dependency) and then, being sync, validated its response there too, so each
request made two round trips through that pool, each waiting for a thread and, on the way there and
back, for the interpreter lock behind whichever thread held it; its database read also queued for
one of the `DB_POOL_SIZE` connections that ingestion, uploads, progress streams and answers' admission
share. Under the burst that was the difference between the victim's two light requests
(evals/results/burst.md: 162 ms at p95 against 65 ms for `GET /api/auth/me`, which takes no thread).

Here such a read runs on the event loop with psycopg's async driver, over `LIGHT_READ_CONNECTIONS`
connections no other work uses: no thread, no shared queue. One user holds at most one of them at a
time (the others of theirs wait their turn), so another user's read waits behind at most one read
of each other user, however many one user sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg_pool import AsyncConnectionPool

from settings import Settings
from storage.db import Database, async_pool


class LightReads:
    """The light reads' connections and each user's turn at them (see the module's docstring)."""

    def __init__(self, settings: Settings, db: Database) -> None:
        self.pool: AsyncConnectionPool[psycopg.AsyncConnection] = async_pool(settings, db.uri,
                                                                             settings.light_read_connections)
        self._turns: dict[int, tuple[asyncio.Lock, list[int]]] = {}  # user -> (their lock, [holders and waiters])

    async def open(self) -> None:
        await self.pool.open(wait=True, timeout=30)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def connection(self, user_id: int) -> AsyncIterator[psycopg.AsyncConnection]:
        """A connection for one read of `user_id`'s, once their previous read is done."""
        lock, users = self._turns.setdefault(user_id, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock, self.pool.connection() as conn:
                yield conn
        finally:
            users[0] -= 1
            if not users[0]:
                del self._turns[user_id]
