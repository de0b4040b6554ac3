"""Where ingestion jobs run: threads inside the server (no broker) or Celery workers (a broker).

`dispatch.py` hands a queued job to whichever is configured; `app.py` is the Celery application
and its tasks (`thotqen worker`, `thotqen beat`); `maintenance.py` is the periodic work (retention,
abandoned jobs) that Celery beat runs with a broker and a server thread runs without one.
Jobs stay Postgres rows either way (storage/jobs.py): the API's progress and recovery read them.
"""
