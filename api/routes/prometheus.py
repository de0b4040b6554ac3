"""`/metrics` for Prometheus and the request series.

What is counted is declared in providers/metrics.py; this module adds the HTTP side: a middleware
that times every request by its route template (`/api/documents/{document_id}`, never the raw path,
so the series stay few) and the protected scrape route, which adds the queue depth that
jobqueue/depth.py reads from Postgres in the background.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.routing import Match, Route

from providers import metrics

router = APIRouter(tags=["metrics"])


# /metrics renders here, not on the default executor that the routes' own waits can fill
_RENDER = ThreadPoolExecutor(2, thread_name_prefix="metrics")


@router.get("/metrics", include_in_schema=False)
async def scrape(request: Request) -> Response:
    """The Prometheus text exposition (METRICS_ALLOW_IPS, or the bearer METRICS_TOKEN)."""
    client = request.client.host if request.client else None
    if not metrics.allowed(request.app.state.settings, client, request.headers.get("authorization")):
        return JSONResponse({"detail": "metrics are readable from METRICS_ALLOW_IPS or with the bearer "
                                       "METRICS_TOKEN"}, status_code=403)
    depth = getattr(request.app.state, "queue_depth", None)
    extra = [depth] if depth is not None else []
    body = await asyncio.get_running_loop().run_in_executor(_RENDER, metrics.render, extra)
    return Response(body, media_type=metrics.CONTENT_TYPE)


class LabelledRoute(Route):
    """A plain Starlette route (an ASGI app mounted at a path, as /mcp is) that names itself in the
    request's scope as FastAPI's routes do, so RequestMetrics labels it by its path, not "unmatched"."""

    def matches(self, scope: Any) -> tuple[Match, Any]:  # Starlette's Scope
        match, child = super().matches(scope)
        if match is not Match.NONE:
            child["route"] = self
        return match, child


class RequestMetrics:
    """ASGI middleware: thotqen_http_request_duration_seconds{method, route, status} for every HTTP
    request (the route template the router matched; "unmatched" for none). Streams are timed to
    their end."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
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
