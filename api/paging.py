"""One way to page a list, for every list route (chats, documents): `limit` and `offset` only,
capped by the list's setting, the answer carrying `next_offset` (null on the last page)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from fastapi import HTTPException, Request

T = TypeVar("T")

MAX_OFFSET = 1_000_000  # far past any user's list; keeps the number inside Postgres' bigint
PAGE_QUERY = frozenset({"limit", "offset"})


def page_query(request: Request) -> None:
    """A page of a list takes `limit` and `offset` only: any other query parameter (a misspelt
    `limt` would silently give the default page) answers 422 naming it."""
    unknown = sorted(set(request.query_params) - PAGE_QUERY)
    if unknown:
        raise HTTPException(422, [{"type": "extra_forbidden", "loc": ["query", name],
                                   "msg": "unknown query parameter; a page takes limit and offset"}
                                  for name in unknown[:20]])


def page(fetch: Callable[[int, int], Sequence[T]], *, limit: int | None, offset: int,
         cap: int) -> tuple[list[T], int | None]:
    """The page `fetch(limit, offset)` gives at most `cap` (`limit` asks for fewer), and the next
    page's offset (None: no more). One row past the page tells whether there is more."""
    size = min(limit or cap, cap)
    rows = list(fetch(size + 1, offset))
    return rows[:size], offset + size if len(rows) > size else None

