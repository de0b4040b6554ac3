"""The queue depth read from the jobs table, a Prometheus collector for the server's /metrics and
`thotqen worker`'s own port: read in the background (every process sees the same table: take max(),
not sum()), so a database that is down never holds a scrape.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from providers import telemetry
from storage import jobs
from storage.db import Database

log = logging.getLogger(__name__)
STATEMENT_MS = 5000  # a queue-depth read that takes longer is cut off by Postgres


class QueueDepth:
    """thotqen_ingestion_queue_jobs{status}: jobs queued and running, read from the jobs table in the
    background, never on the scrape's time: a scrape starts a read when the last is older than
    `refresh_s`, waits at most `wait_s` for it, and otherwise exports the last value read, with
    thotqen_ingestion_queue_read_age_seconds saying how old it is. A database that is down or does not
    answer (each read is bounded by a statement timeout and the pool's own) leaves /metrics answering
    at once, the age growing; before any read succeeded, neither series is exported.
    thotqen_database_up says whether the last read reached the database (1) or not (0): what the
    ThotqenDatabaseDown alert reads (deploy/observability/alerts.yml); exported once a read ended."""

    def __init__(self, db: Database, refresh_s: float = 5.0, wait_s: float = 0.5) -> None:
        self.db = db
        self.refresh_s = refresh_s
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._depth: dict[str, int] | None = None
        self._read_at = 0.0
        self._reading: threading.Thread | None = None
        self._up: bool | None = None

    def _read(self) -> None:
        try:
            # on a timer: not a trace of one SQL span each time (providers/telemetry.py)
            with telemetry.untraced(), self.db.connection() as conn, conn.transaction():
                conn.execute("select set_config('statement_timeout', %s, true)", (str(int(STATEMENT_MS)),))
                depth = jobs.queue_depth(conn)
        except Exception as exc:  # the last value stays, its age says how stale it is
            log.debug("queue depth not read: %s", exc)
            with self._lock:
                self._up = False
            return
        with self._lock:
            self._depth, self._read_at, self._up = depth, time.monotonic(), True

    def _fresh(self) -> threading.Thread | None:
        """The read in flight, started now when the last one is older than refresh_s (one at a time)."""
        with self._lock:
            if self._reading is not None and self._reading.is_alive():
                return self._reading
            if self._depth is not None and time.monotonic() - self._read_at < self.refresh_s:
                return None
            self._reading = threading.Thread(target=self._read, name="queue-depth", daemon=True)
            self._reading.start()
            return self._reading

    def collect(self) -> Iterator[Metric]:
        reading = self._fresh()
        if reading is not None:
            reading.join(self.wait_s)
        with self._lock:
            depth, read_at, up = self._depth, self._read_at, self._up
        if up is not None:
            yield GaugeMetricFamily("thotqen_database_up", "1 when this process's last background read reached "
                                    "the database, 0 when it failed or timed out", value=int(up))
        if depth is None:
            return
        family = GaugeMetricFamily("thotqen_ingestion_queue_jobs", "ingestion jobs queued and running (read from "
                                   "the jobs table in the background; its age: "
                                   "thotqen_ingestion_queue_read_age_seconds)", labels=["status"])
        for status, n in depth.items():
            family.add_metric([status], n)
        yield family
        yield GaugeMetricFamily("thotqen_ingestion_queue_read_age_seconds", "seconds since "
                                "thotqen_ingestion_queue_jobs was read from the database (grows while it cannot "
                                "be read)", value=round(time.monotonic() - read_at, 3))
