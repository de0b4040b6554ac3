"""Periodic upkeep: retention (storage/retention.py) and jobs abandoned by dead workers.

With a broker, Celery beat schedules these as tasks (jobqueue/app.py); without one, the server runs
`MaintenanceThread`; `thotqen maintenance` runs them once (cron). All of it is idempotent, so
several schedulers at once (two server processes) only repeat work.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from providers import telemetry
from settings import Settings
from storage import jobs, retention
from storage.outage import DatabaseUnavailable

log = logging.getLogger(__name__)


def purge(db: Any, settings: Settings) -> dict[str, int]:  # storage.db.Database
    with db.connection() as conn:
        counts = retention.purge(conn, retention_days=settings.maintenance.retention_days,
                                 answer_cache_ttl_hours=settings.cache.ttl_hours)
    if any(counts.values()):
        log.info("retention: deleted %s", ", ".join(f"{n} {table}" for table, n in counts.items() if n))
    return counts


def sweep_jobs(db: Any, settings: Settings,
               publish: Callable[[uuid.UUID], None] | None = None) -> dict[str, int]:
    """Re-queue (or, after JOB_MAX_ATTEMPTS, fail) jobs whose worker died. With `publish` (a broker),
    hand re-queued jobs and queued jobs whose message may be lost to the broker again."""
    with db.connection() as conn:
        requeued, failed = jobs.recover_interrupted(conn, max_attempts=settings.jobs.max_attempts)
        stale = jobs.unpublished(conn, older_than_s=settings.jobs.republish_s) if publish else []
    published = unsent = 0
    if publish is not None:
        for job_id in dict.fromkeys([*requeued, *stale]):
            try:
                publish(job_id)
                published += 1
            except Exception as exc:  # the broker is down: the job stays queued for the next sweep
                unsent += 1
                log.warning("job %s: could not hand it to the broker: %s", job_id, type(exc).__name__)
    return {"requeued": len(requeued), "failed": len(failed), "published": published, "unsent": unsent}


class MaintenanceThread:
    """The in-process scheduler (no broker): retention and abandoned jobs every MAINTENANCE_INTERVAL_S."""

    def __init__(self, db: Any, settings: Settings) -> None:
        self.db, self.settings = db, settings
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.maintenance.interval_s):
            try:
                with telemetry.span("maintenance"):  # one trace a round, its statements under it
                    purge(self.db, self.settings)
                    sweep_jobs(self.db, self.settings)
            except DatabaseUnavailable as exc:  # logged once by storage/outage.py; the next round retries
                log.warning("maintenance skipped: %s", exc)
            except Exception:  # the database may be restarting; the next round retries
                log.exception("maintenance failed")
