"""What a piece of code sends Postgres, read from libpq's own trace of the wire protocol (PQtrace):
every statement, BEGIN and COMMIT included, whatever psycopg does with them (prepared or not,
pipelined or not), and the round trips, each a wait for the server to answer."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import pq

# a frontend message in the trace: "F  52  Parse  "" "select ..." 3 ..." (timestamps suppressed)
_LINE = re.compile(r'^F\t\d+\t(?P<kind>\w+)(?:\t ?(?P<rest>.*))?$')
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


@dataclass
class Sent:
    """The statements executed (their text, in order) and the round trips: a simple Query or a Sync
    is where the client waits for the server's ReadyForQuery."""

    statements: list[str] = field(default_factory=list)
    round_trips: int = 0

    def read(self, trace: str, prepared: Callable[[], dict[str, str]]) -> None:
        """Take in a trace; `prepared()`: the texts of statements prepared before it, by name."""
        parsed: dict[str, str] = {}  # statement name ("" the unnamed one) -> its text
        bound = ""
        for line in trace.splitlines():
            found = _LINE.match(line)
            if found is None:
                continue
            kind, quoted = found["kind"], _QUOTED.findall(found["rest"] or "")
            if kind == "Parse":
                parsed[quoted[0]] = quoted[1]
            elif kind == "Bind":
                if quoted[1] not in parsed:  # prepared by psycopg before the block: run by name only
                    parsed.update(prepared())
                bound = parsed[quoted[1]]
            elif kind == "Execute":
                self.statements.append(bound)
            elif kind == "Query":
                self.statements.append(quoted[0])
                self.round_trips += 1
            elif kind == "Sync":
                self.round_trips += 1


@contextmanager
def traced(conn: psycopg.Connection) -> Iterator[Sent]:
    """The statements `conn` sends inside the block (filled in when it ends)."""
    sent = Sent()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace"
        with path.open("w") as out:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            try:
                yield sent
            finally:  # a block that raised (a refused request) counts too
                conn.pgconn.untrace()  # flushes libpq's buffer into the file
                sent.read(path.read_text(), lambda: dict(
                    conn.execute("select name, statement from pg_prepared_statements").fetchall()))


class TracedDatabase:
    """A storage.db.Database whose connections are traced: `sent` holds one Sent per connection() block."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.sent: list[Sent] = []

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with self.db.connection() as conn, traced(conn) as sent:
            self.sent.append(sent)
            yield conn
