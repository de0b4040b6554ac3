"""HTTP server (FastAPI). Starts the database (embedded by default), migrates, recovers jobs."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch/llama.cpp start OpenMP (see cli.py)

from fastapi import FastAPI  # noqa: E402
from fastapi.responses import JSONResponse

from settings import get_settings
from storage import jobs
from storage.db import Database, open_database

log = logging.getLogger("thotqen.server")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings = get_settings()
    db = await asyncio.to_thread(open_database, settings)
    with db.connection() as conn:
        requeued, failed = jobs.recover_interrupted(conn, max_attempts=settings.job_max_attempts)
    if requeued or failed:
        log.warning("recovered interrupted jobs: %d re-queued, %d failed", len(requeued), len(failed))
    app.state.db = db
    yield


app = FastAPI(title="Thotqen", version="0.1.0", lifespan=lifespan)


@app.get("/api/health")
async def health() -> JSONResponse:
    """Database reachability within a 2 s deadline."""
    db: Database = app.state.db

    def ping() -> None:
        with db.connection() as conn:
            conn.execute("select 1")

    try:
        await asyncio.wait_for(asyncio.to_thread(ping), timeout=2.0)
    except Exception as exc:  # timeout or connection error: report, never raise
        return JSONResponse({"status": "unavailable", "database": f"unreachable: {type(exc).__name__}"},
                            status_code=503)
    return JSONResponse({"status": "ok", "database": db.mode})
