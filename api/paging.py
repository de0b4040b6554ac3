"""One way to page a list, for every list route (chats, documents): `limit` and `offset` only,
capped by the list's setting, the answer carrying `next_offset` (null on the last page)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from fastapi import HTTPException, Request

T = TypeVar("T")

MAX_OFFSET = 1_000_000  # far past any user's list; keeps the number inside Postgres' bigint
PAGE_QUERY = frozenset({"limit", "offset"})


def query_only(*allowed: str) -> Callable[[Request], Awaitable[None]]:
    """A dependency that answers 422 naming any query parameter outside `allowed` (a misspelt `limt`
    would silently give the default). Async: no thread for it (api/deps.py says why)."""
    names = frozenset(allowed)

    async def check(request: Request) -> None:
        unknown = sorted(set(request.query_params) - names)
        if unknown:
            raise HTTPException(422, [{"type": "extra_forbidden", "loc": ["query", name],
                                       "msg": f"unknown query parameter; this takes {', '.join(sorted(names))}"}
                                      for name in unknown[:20]])

    return check


# A page of a list takes `limit` and `offset` only; a list of what may belong to a workspace
# (documents, collections) also `workspace_id` (api/access.py).
page_query = query_only(*PAGE_QUERY)
space_page_query = query_only(*PAGE_QUERY, "workspace_id")


def page(fetch: Callable[[int, int], Sequence[T]], *, limit: int | None, offset: int,
         cap: int) -> tuple[list[T], int | None]:
    """The page `fetch(limit, offset)` gives at most `cap` (`limit` asks for fewer), and the next
    page's offset (None: no more). One row past the page tells whether there is more."""
    size = page_size(limit, cap)
    return cut(fetch(size + 1, offset), size, offset)


def page_size(limit: int | None, cap: int) -> int:
    """How many a page holds: `limit`, at most `cap` (its default)."""
    return min(limit or cap, cap)


def cut(rows: Sequence[T], size: int, offset: int) -> tuple[list[T], int | None]:
    """The page of `size` from `rows` read with a limit of size + 1 at `offset`, and the next page's offset."""
    return list(rows[:size]), offset + size if len(rows) > size else None

