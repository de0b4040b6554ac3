"""Whether the database can be reached, so a request fails in moments while it cannot.

Without this, every request that needs Postgres while it is down waited for the pool's timeout (30 s)
and answered 500 with a traceback. `Availability` is a small circuit breaker over one Database: a
connection found broken during a request, a connection attempt that failed, or a pool that handed no
connection in DB_ACQUIRE_TIMEOUT_S, followed by a fresh connection attempt that fails too, marks the
database down. While it is down `check()` raises DatabaseUnavailable at once (the server answers 503
with Retry-After, api's error handlers), and one thread tries a fresh connection every RETRY_S; the
first that succeeds drops the pool's broken connections and marks it up again. Each change is logged
once, as one line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

RETRY_S = 2.0  # between connection attempts while the database is down; also the answers' Retry-After


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached now (down, unreachable, or no pooled connection in time)."""

    def __init__(self, reason: str, retry_after_s: float = RETRY_S) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


class Availability:
    """A circuit breaker: up until a failure is confirmed by `probe` (a fresh connection and a query,
    bounded by the connect timeout), then down until `probe` succeeds again (tried every `retry_s` on
    a thread of its own); `recovered` runs once the database answers again (the pool's check)."""

    def __init__(self, probe: Callable[[], None], recovered: Callable[[], None] = lambda: None,
                 retry_s: float = RETRY_S) -> None:
        self._probe = probe
        self._recovered = recovered
        self.retry_s = retry_s
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._reason = ""
        self._prober: threading.Thread | None = None
        self._closed = threading.Event()

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def check(self) -> None:
        """Raise DatabaseUnavailable at once while the database is down."""
        if self._down_since is not None:
            raise DatabaseUnavailable(f"the database is unreachable ({self._reason})", self.retry_s)

    def suspect(self, exc: BaseException) -> bool:
        """A request met `exc` (a broken connection, a pool timeout): confirm with a fresh connection, and
        mark the database down when that fails too. Returns whether it is down."""
        if self._down_since is not None:
            return True
        try:
            self._probe()
        except Exception as probe_exc:  # any failure to connect is the outage
            self.failed(probe_exc)
            return True
        return False

    def failed(self, exc: BaseException) -> None:
        """Mark the database down (a connection attempt failed) and start retrying."""
        with self._lock:
            if self._closed.is_set():
                return
            if self._down_since is None:
                self._down_since = time.monotonic()
                self._reason = _reason(exc)
                log.error("database unreachable: %s; answering 503 until it is back (retrying every %.0f s)",
                          self._reason, self.retry_s)
            if self._prober is None or not self._prober.is_alive():
                self._prober = threading.Thread(target=self._retry, name="database-retry", daemon=True)
                self._prober.start()

    def _retry(self) -> None:
        while not self._closed.wait(self.retry_s):
            try:
                self._probe()
            except Exception as exc:
                self._reason = _reason(exc)
                continue
            try:
                self._recovered()
            except Exception as exc:  # the pool drops what it can; requests find the rest
                log.warning("database back, but the pool's check failed: %s", _reason(exc))
            with self._lock:
                since, self._down_since = self._down_since, None
            if since is not None:
                log.warning("database reachable again after %.1f s", time.monotonic() - since)
            return

    def close(self) -> None:
        self._closed.set()


def _reason(exc: BaseException) -> str:
    """One line naming the failure (psycopg's messages span lines; no connection string is in them)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"
