"""Hand a queued job to whatever runs jobs: the server's own threads, or a Celery broker."""

from __future__ import annotations

import logging
import uuid

from celery import Celery as CeleryApp

from jobqueue.app import publish
from jobqueue.worker import IngestWorker, QueueUnavailable
from settings import Settings
from storage.db import Database

log = logging.getLogger(__name__)


class BrokerUnavailable(QueueUnavailable):
    """The broker did not take the job; the API undoes the upload and answers 503."""


class InProcess:
    """No broker: the server's ingestion threads poll Postgres; a new job only wakes them."""

    kind = "in-process"

    def __init__(self, worker: IngestWorker) -> None:
        self.worker = worker

    def submit(self, job_id: uuid.UUID) -> None:
        self.worker.wake()


class Celery:
    """A broker: each job becomes an `thotqen.ingest` task that a `thotqen worker` process runs."""

    kind = "celery"

    def __init__(self, settings: Settings, app: CeleryApp, db: Database | None = None) -> None:
        self.settings = settings
        self.db = db
        self.app = app

    def submit(self, job_id: uuid.UUID) -> None:
        try:
            publish(self.app, job_id, timeout_s=self.settings.celery.publish_timeout_s, db=self.db)
        except Exception as exc:
            log.warning("job %s: the broker did not take it: %s", job_id, type(exc).__name__)
            raise BrokerUnavailable(str(exc) or type(exc).__name__) from exc
