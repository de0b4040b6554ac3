"""Storage layer: Postgres (embedded or external), migrations, and the queries that run `sql/`.

Takes vectors, never makes them. Every query that reads user data is scoped by owner in SQL.
"""

import uuid


def parse_uuid(value: object) -> uuid.UUID | None:
    """An id from a caller as a UUID, or None when it is not one (it then matches nothing)."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
