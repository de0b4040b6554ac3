"""The row of a statement that always returns one (an aggregate, `insert ... returning`, a lock probe).

psycopg types `fetchone()` as "a row or None"; these say what the statement guarantees, and fail loudly
(not with a `None[0]` TypeError) when it does not hold.
"""

from __future__ import annotations

from typing import Any, TypeVar

import psycopg

R = TypeVar("R")
T = TypeVar("T")


def one(cur: psycopg.Cursor[R]) -> R:
    """The cursor's next row, which the statement guarantees exists."""
    row = cur.fetchone()
    if row is None:
        raise LookupError("the statement returned no row")
    return row


def scalar(cur: psycopg.Cursor[Any], kind: type[T]) -> T:
    """The first column of the statement's one row, checked to be a `kind` (NULL is not one)."""
    value = one(cur)[0]
    if not isinstance(value, kind):
        raise TypeError(f"the statement returned {type(value).__name__}, not {kind.__name__}")
    return value
