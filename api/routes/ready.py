"""Readiness: `GET /api/ready` says whether this process should be sent traffic, beside `/api/health`
(liveness: is the process and its database there at all). Ready means every part a request needs
answers now: the database (a ping within 2 s), the broker when CELERY_BROKER_URL is set (a connection
within 2 s), the answer processes (all alive; one that died is started again, and the probe says
not ready until it is), and the models (the embedder loaded at start-up, an LLM link configured).
A draining server (SIGTERM: api/drain.py) is not ready, so a balancer stops sending it questions."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api import drain
from api.schemas import ReadyOut
from providers import telemetry

router = APIRouter(tags=["health"])
DEADLINE_S = 2.0


async def _timed(check: Any, *args: Any) -> str | None:
    """None when `check(*args)` (blocking) returns within the deadline, else why not."""
    try:
        await asyncio.wait_for(asyncio.to_thread(check, *args), timeout=DEADLINE_S)
    except TimeoutError:
        return f"no answer within {DEADLINE_S:g} s"
    except Exception as exc:  # a probe reports, never raises
        return f"unreachable: {type(exc).__name__}"
    return None


def _broker(celery_app: Any) -> None:  # a Celery app
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=DEADLINE_S)


async def checks(app: Any) -> dict[str, str]:  # the FastAPI app
    """Each part's state: "ok", "not configured", or why it is not ready."""
    state = app.state
    out: dict[str, str] = {}
    # a probe every few seconds: its request is not traced (providers/telemetry.py), nor its statements
    with telemetry.untraced():
        out["database"] = await _timed(state.db.ping) or "ok"
        celery_app = getattr(state.jobs, "app", None)
        out["broker"] = (await _timed(_broker, celery_app) or "ok") if celery_app is not None else "not configured"
    answers = state.answers
    if answers is None:
        out["answer_processes"] = "not configured (answers run in the server's threads)"
    else:
        alive, wanted = answers.running()
        out["answer_processes"] = "ok" if alive == wanted else f"{alive} of {wanted} running; starting again"
        if alive < wanted:
            answers.revive()
    if not getattr(state, "models_ready", False):
        out["models"] = "loading"
    else:
        links = getattr(state.runtime.chain(), "links", None)  # built and warmed at start-up: no I/O here
        out["models"] = "ok" if links != [] else "no LLM link is configured (see thotqen doctor)"
    return out


@router.get("/api/ready", response_model=ReadyOut,
            responses={503: {"model": ReadyOut, "description": "not ready: a part is down, or the server is draining"}})
async def ready(request: Request) -> JSONResponse:
    """Whether this process should be sent traffic (every part answers); 503 says which part is not."""
    if drain.STATE.draining:
        return JSONResponse({"status": "draining", "checks": {}}, status_code=503)
    found = await checks(request.app)
    fine = all(v == "ok" or v.startswith("not configured") for v in found.values())
    return JSONResponse({"status": "ready" if fine else "not ready", "checks": found}, status_code=200 if fine else 503)
