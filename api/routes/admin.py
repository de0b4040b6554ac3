"""Admin metrics: the query log in Postgres, and LangSmith's runs when LANGSMITH_API_KEY is set."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Query

from api.deps import AdminUser, DbDep, SettingsDep
from api.schemas import MetricsOut, error
from settings import Settings
from storage import feedback, query_log, workspace_metrics

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/admin", tags=["admin"])


def langsmith_metrics(settings: Settings, hours: float, limit: int = 1000) -> dict[str, Any]:
    """Root runs of the project in the window: count, errors, latency percentiles, tokens."""
    from langsmith import Client

    if settings.langsmith.api_key is None:
        raise ValueError("LangSmith metrics need LANGSMITH_API_KEY")
    client = Client(api_url=settings.langsmith.endpoint, api_key=settings.langsmith.api_key.get_secret_value())
    since = datetime.now(UTC) - timedelta(hours=hours)
    latencies: list[float] = []
    count = errors = tokens = 0
    for run in client.list_runs(project_name=settings.langsmith.project, is_root=True, start_time=since,
                                limit=limit):
        count += 1
        errors += 1 if run.error else 0
        tokens += int(run.total_tokens or 0)
        if run.end_time and run.start_time:
            latencies.append((run.end_time - run.start_time).total_seconds() * 1000)
    latencies.sort()

    def pct(p: float) -> float | None:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))], 1) if latencies else None

    return {"project": settings.langsmith.project, "runs": count, "errors": errors,
            "latency_ms": {"p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99)}, "tokens": tokens,
            "truncated": count >= limit}


def figures_out(w: dict[str, Any]) -> dict[str, Any]:
    """A workspace's figures as JSON (api/routes/workspaces.py's metrics route answers the same shape)."""
    return {**w, "created_at": w["created_at"].isoformat()}


# exclude_unset: `langsmith` is absent, not null, without LANGSMITH_API_KEY
@router.get("/metrics", response_model=MetricsOut, response_model_exclude_unset=True,
            responses={403: error("admin only (THOTQEN_ADMINS)")})
def metrics(_admin: AdminUser, db: DbDep, settings: SettingsDep,
            hours: float = Query(24.0, gt=0, le=24 * 90, description="window, in hours")) -> dict[str, Any]:
    """Questions, success rate, latency percentiles, tokens, answers per provider, users' verdicts
    (thumbs up and down, the latest notes) and each workspace's figures (admins only)."""
    with db.connection() as conn:
        spaces = workspace_metrics.every(conn, hours=hours)
        out: dict[str, Any] = {"query_log": query_log.metrics(conn, hours=hours),
                               "feedback": feedback.counts(conn, hours=hours),
                               "workspaces": {**spaces, "workspaces": [figures_out(w) for w in spaces["workspaces"]]}}
    if settings.langsmith.api_key is not None:
        try:
            out["langsmith"] = langsmith_metrics(settings, hours)
        except Exception as exc:  # LangSmith down must not break the local metrics
            log.warning("LangSmith metrics unavailable: %s", type(exc).__name__)
            out["langsmith"] = {"error": f"LangSmith unavailable: {type(exc).__name__}"}
    return out
