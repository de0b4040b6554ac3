"""Tenancy's second line in Postgres (sql/033_tenant_policies.sql): a request's reads (and its writes
to chats, messages, feedback and collections) run as the role `thotqen_app`, which row-level
security binds, with the owners it may use in the transaction's setting `thotqen.owners`. So a query
that forgot its `owner_id = any(...)` still reads, and changes, nothing of another tenant.

Both are transaction-local (`set_config(..., true)`, i.e. SET LOCAL): they end with the transaction,
so a transaction pooler (PgBouncer, Supabase's port 6543) keeps them, and a connection goes back to
the pool as the owner. The queries keep their own scoping: this is a second line, not the first.

It guards against a forgotten WHERE, not against SQL injection: the connection's login is the tables'
owner and could switch back (docs/teams.md#enforced-twice-row-level-security).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

import storage.workspaces as workspaces  # it uses scoped() too: attributes read at call time

if TYPE_CHECKING:
    from storage.workspaces import Owners

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")

APP_ROLE = "thotqen_app"
SETTING = "thotqen.owners"

# One round trip: the owners, then the role when this login may take it (the migration could not
# create it where the login lacks CREATEROLE: then the reads stay the owner's, warned at start).
# PostgreSQL 16 split membership into SET and INHERIT: switching needs SET.
ENTER = (
    f"select set_config('{SETTING}', %s, true),"
    " (select set_config('role', r.rolname, true) from pg_roles r"
    f"  where r.rolname = '{APP_ROLE}' and pg_has_role(current_user, r.oid,"
    "   case when current_setting('server_version_num')::int >= 160000 then 'SET' else 'MEMBER' end))"
)
LEAVE = f"select set_config('role', %s, true), set_config('{SETTING}', %s, true)"

# ENTER with the owners read in the same statement: member_spaces() (it reads workspace_members, which
# only the login reads) runs in the inner select, and the role is taken in a subquery that depends on
# its result, so after it. Returns the owners as the setting holds them ('{}': none).
ENTER_MEMBER = (
    f"select o.owners, (select set_config('role', r.rolname, true) from pg_roles r"
    f"  where o.owners is not null and r.rolname = '{APP_ROLE}' and pg_has_role(current_user, r.oid,"
    "   case when current_setting('server_version_num')::int >= 160000 then 'SET' else 'MEMBER' end))"
    f" from (select set_config('{SETTING}', member_spaces(%s, %s, %s)::text, true) as owners) o"
)
# The owners a query inside member_read() is scoped to, for its own `owner_id = any(...)`.
OWNERS = f"current_setting('{SETTING}')::bigint[]"


def owners_text(owners: Owners) -> str:
    """The setting's value: a bigint[] literal."""
    return "{" + ",".join(str(o) for o in workspaces.owner_ids(owners)) + "}"


@contextmanager
def scoped(conn: psycopg.Connection, owners: Owners) -> Iterator[psycopg.Connection]:
    """A transaction (or, inside one, the rest of this block) in which rows of `owners` only are
    visible and writable. Inside an enclosing transaction the role and setting it had come back at
    the end of the block (a savepoint's release would keep them)."""
    if conn.info.transaction_status == TransactionStatus.IDLE:
        with conn.transaction():
            conn.execute(ENTER, (owners_text(owners),))
            yield conn
        return
    before = conn.execute(f"select current_setting('role'), coalesce(current_setting('{SETTING}', true), '')"
                          ).fetchone()
    assert before is not None
    if before == (APP_ROLE, owners_text(owners)):  # already so (a scoped read calling another): as it is
        yield conn
        return
    conn.execute(ENTER, (owners_text(owners),))
    try:
        yield conn
    finally:
        if conn.info.transaction_status == TransactionStatus.INTRANS:  # not after an error: it rolls back
            conn.execute(LEAVE, before)


def owners_only(fn: Callable[P, R]) -> Callable[P, R]:
    """A storage function `fn(conn, *, owner_id=<owners>, ...)` run inside scoped(conn, owners): one
    whose every statement touches only tables with a tenant policy (not the audit log, not users)."""
    @functools.wraps(fn)
    def scoped_fn(*args: P.args, **kwargs: P.kwargs) -> R:
        conn = cast(psycopg.Connection, args[0] if args else kwargs["conn"])
        with scoped(conn, cast("Owners", kwargs["owner_id"])):
            return fn(*args, **kwargs)
    return scoped_fn


def person_only(fn: Callable[P, R]) -> Callable[P, R]:
    """A storage function `fn(conn, *, owner_id=<a person>, ...)` on that person's own rows that also
    shows names of their spaces (a chat's workspace and collection): run inside scoped() over every
    space the person reads now (member_spaces(), read as the login before switching)."""
    @functools.wraps(fn)
    def scoped_fn(*args: P.args, **kwargs: P.kwargs) -> R:
        conn = cast(psycopg.Connection, args[0] if args else kwargs["conn"])
        with scoped(conn, person_spaces(conn, cast(int, kwargs["owner_id"]))):
            return fn(*args, **kwargs)
    return scoped_fn


def person_spaces(conn: psycopg.Connection, user_id: int) -> list[int]:
    """The owners `user_id` reads now (their own id and their workspaces'): member_spaces() needs
    workspace_members, which only the login reads, so inside a scoped block it is the block's."""
    current = conn.execute(f"select current_user = '{APP_ROLE}',"
                           f" coalesce(current_setting('{SETTING}', true), '')").fetchone()
    if current is not None and current[0]:
        return [int(o) for o in current[1].strip("{}").split(",") if o]
    return workspaces.spaces(conn, user_id)


def member_read(conn: psycopg.Connection, user_id: int, workspace_id: int | None, query: str,
                params: Sequence[Any], *, least: str = "viewer") -> tuple[list[int], list[dict[str, Any]]]:
    """(the owners `user_id` uses at role `least`: their own and their workspaces', or `workspace_id`
    only, empty when not a member there; the rows `query` reads under them, its owners written
    OWNERS). What member_spaces() then scoped() do in five round trips (the owners, BEGIN, ENTER, the
    read, COMMIT), in one: the two statements go as one pipeline, in the one transaction that its sync
    ends (the role and the setting end with it)."""
    if not conn.autocommit or conn.info.transaction_status != TransactionStatus.IDLE:
        # the transaction would outlive the block, and the role with it (scoped() is for that case)
        raise RuntimeError("member_read needs an idle autocommit connection (a pool's)")
    with conn.pipeline():
        entered = conn.execute(ENTER_MEMBER, (user_id, workspace_id, workspaces.check_role(least)))
        read = conn.cursor(row_factory=dict_row).execute(query, params)
    row = entered.fetchone()
    assert row is not None  # the statement selects one row
    return [int(o) for o in str(row[0]).strip("{}").split(",") if o], read.fetchall()


def enforced(conn: psycopg.Connection) -> bool:
    """Whether reads here switch to the app role (false where the role could not be made)."""
    with scoped(conn, []):
        row = conn.execute("select current_user").fetchone()
    return bool(row and row[0] == APP_ROLE)


def check(conn: psycopg.Connection) -> bool:
    """enforced(), with a warning when not: said once at start (storage/db.py)."""
    ok = enforced(conn)
    if not ok:
        log.warning("row-level security is not enforced on reads: this login cannot switch to the role %s"
                    " (docs/teams.md#enforced-twice-row-level-security)", APP_ROLE)
    return ok
