"""Users of the command line: rows created on first use, apart from web accounts (sql/026_bounded.sql)."""

from __future__ import annotations

import psycopg

from storage.rows import scalar


class NotACliUser(Exception):
    """The name belongs to a web (or external) account, which the CLI acts as only when told to."""

    def __init__(self, username: str, kind: str) -> None:
        super().__init__(f"{username!r} is a {kind} account, not a command-line user; pass --web-account to act "
                         f"as it, or pick another --user")
        self.username = username


class NoWebAccount(LookupError):
    """--web-account named an account that does not exist."""


def get_or_create_user(conn: psycopg.Connection, username: str, *, web_account: bool = False) -> int:
    """The id of the command-line user `username`, created on first use; `web_account`: the id of the
    existing web or external account of that name instead (NoWebAccount when there is none).
    A name that is a web account raises NotACliUser unless `web_account` says so."""
    if web_account:
        row = conn.execute("select id from users where username = %s and kind in ('web', 'external')",
                           (username,)).fetchone()
        if row is None:
            raise NoWebAccount(f"no web account is named {username!r}")
        return int(row[0])
    row = conn.execute(
        "insert into users (username, kind) values (%s, 'cli') on conflict (username) do nothing returning id",
        (username,),
    ).fetchone()
    if row:
        return int(row[0])
    found = conn.execute("select id, kind from users where username = %s", (username,)).fetchone()
    if found is None:  # deleted in between: try once more
        return scalar(conn.execute("insert into users (username, kind) values (%s, 'cli') returning id",
                                   (username,)), int)
    if found[1] != "cli":
        raise NotACliUser(username, found[1])
    return int(found[0])


def find_user(conn: psycopg.Connection, username: str) -> int | None:
    row = conn.execute("select id from users where username = %s", (username,)).fetchone()
    return row[0] if row else None
