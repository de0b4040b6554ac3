"""What one user's uploads keep (issue 41): bytes and documents, counted in SQL over every document
they uploaded, in their own space or a workspace, whatever its status (a failed document keeps its
file until it is deleted, so it counts). STORAGE_MB_PER_USER and DOCUMENTS_PER_USER bound it."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from storage.rows import one

MB = 1024 * 1024


@dataclass(frozen=True)
class Usage:
    documents: int
    bytes: int


@dataclass(frozen=True)
class Quota:
    documents: int
    bytes: int

    @classmethod
    def of(cls, storage_mb: float, documents: int) -> Quota:
        return cls(documents, int(storage_mb * MB))

    def refusal(self, usage: Usage, adding: int) -> str | None:
        """Why one more document of `adding` bytes does not fit (None: it fits)."""
        if usage.documents + 1 > self.documents:
            return (f"storage quota: you keep {usage.documents} documents, the most one account may "
                    f"(DOCUMENTS_PER_USER {self.documents}); delete some first")
        if usage.bytes + adding > self.bytes:
            return (f"storage quota: your documents hold {usage.bytes / MB:.1f} MB of {self.bytes / MB:g} MB "
                    f"(STORAGE_MB_PER_USER) and this file is {adding / MB:.1f} MB; delete some first")
        return None

    def left(self, usage: Usage) -> int:
        """Bytes one more file may hold."""
        return max(self.bytes - usage.bytes, 0)


def usage(conn: psycopg.Connection, user_id: int) -> Usage:
    """What `user_id` uploaded and is kept (a document from before uploaded_by: its owner's)."""
    count, size = one(conn.execute(
        "select count(*), coalesce(sum(size_bytes), 0) from documents where coalesce(uploaded_by, owner_id) = %s",
        (user_id,)))
    return Usage(int(count), int(size))


def lock(conn: psycopg.Connection, user_id: int) -> None:
    """Serialise one uploader's new documents until the transaction ends: parallel uploads cannot all
    fit under the quota one by one."""
    conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"thotqen:quota:{user_id}",))
