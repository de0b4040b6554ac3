"""Readiness (`GET /api/ready`, api/routes/ready.py) beside liveness: every part a request needs, each named."""

from __future__ import annotations

import socket
import time

from tests.server.conftest import LiveServer


def test_ready_names_each_part(live: LiveServer) -> None:
    with live.client() as c:
        res = c.get("/api/ready")
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["status"] == "ready"
        assert body["checks"]["database"] == "ok" and body["checks"]["models"] == "ok"
        assert body["checks"]["broker"] == "not configured"
        assert set(body["checks"]) == {"database", "broker", "answer_processes", "models"}
        assert c.get("/api/health").status_code == 200  # liveness stays as it was


def test_an_unreachable_broker_is_not_ready(own_server, server_settings) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    live = own_server(server_settings.model_copy(update={"celery_broker_url": f"redis://127.0.0.1:{port}/0",
                                                         "answer_processes": 0}), start_worker=False)
    with live.client() as c:
        started = time.monotonic()
        res = c.get("/api/ready")
        assert time.monotonic() - started < 10
        assert res.status_code == 503, res.text
        checks = res.json()["checks"]
        assert checks["broker"] != "ok" and checks["database"] == "ok", checks
        assert checks["answer_processes"].startswith("not configured")
