"""`/metrics` for Prometheus, the request series, and the queue depth read from the jobs table.

What is counted is declared in providers/metrics.py; this module adds the HTTP side: a middleware
that times every request by its route template (`/api/documents/{document_id}`, never the raw path,
so the series stay few), the protected scrape route, and a collector that reads the queue depth
from Postgres at scrape time (every process sees the same table: take max(), not sum()).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client.core import GaugeMetricFamily, Metric

from providers import metrics
from storage import jobs
from storage.db import Database

router = APIRouter(tags=["metrics"])


class QueueDepth:
    """thotqen_ingestion_queue_jobs{status}: jobs queued and running, read when scraped."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("thotqen_ingestion_queue_jobs", "ingestion jobs queued and running now "
                                   "(read from the jobs table at scrape time)", labels=["status"])
        try:
            with self.db.connection() as conn:
                depth = jobs.queue_depth(conn)
        except Exception:  # noqa: BLE001 - a scrape during a database outage still answers, without the gauge
            return
        for status, n in depth.items():
            family.add_metric([status], n)
        yield family


@router.get("/metrics", include_in_schema=False)
async def scrape(request: Request) -> Response:
    """The Prometheus text exposition (METRICS_ALLOW_IPS, or the bearer METRICS_TOKEN)."""
    client = request.client.host if request.client else None
    if not metrics.allowed(request.app.state.settings, client, request.headers.get("authorization")):
        return JSONResponse({"detail": "metrics are readable from METRICS_ALLOW_IPS or with the bearer "
                                       "METRICS_TOKEN"}, status_code=403)
    db = getattr(request.app.state, "db", None)
    extra = [QueueDepth(db)] if db is not None else []
    body = await asyncio.to_thread(metrics.render, extra)
    return Response(body, media_type=metrics.CONTENT_TYPE)


class RequestMetrics:
    """ASGI middleware: thotqen_http_request_duration_seconds{method, route, status} for every HTTP
    request (the route template the router matched; "unmatched" for none). Streams are timed to
    their end."""

    def __init__(self, app: Any) -> None:  # noqa: ANN401
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:  # noqa: ANN401
        if scope["type"] != "http" or scope.get("path") == "/metrics":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            metrics.observe(metrics.HTTP_REQUESTS, time.perf_counter() - started, scope.get("method", ""), route,
                            str(status[0]))
