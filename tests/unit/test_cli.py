"""`thotqen serve` hands uvicorn what it was told (the CLI as a real subprocess: tests/test_cli.py)."""

from __future__ import annotations

import pytest


def test_serve_passes_host_port_and_workers_to_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    import cli

    seen: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    # --workers exports PROMETHEUS_MULTIPROC_DIR (cli.share_metrics); unset again afterwards, or every
    # later test in this process renders /metrics from that directory (test_prometheus failed after it)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    assert cli.main(["serve", "--port", "8123", "--workers", "2"]) == 0
    assert seen["app"] == "server:app" and seen["port"] == 8123 and seen["workers"] == 2
    assert seen["host"] == "127.0.0.1"


def test_serve_trusts_forwarded_headers_only_from_configured_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 row 8: uvicorn's default believes X-Forwarded-For from loopback; serve must not."""
    import uvicorn

    import cli

    seen: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    assert cli.main(["serve"]) == 0  # each run reads the environment afresh (cli.main builds its Settings)
    assert seen["proxy_headers"] is False and seen["forwarded_allow_ips"] is None
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.5,10.0.1.0/24")
    assert cli.main(["serve"]) == 0
    assert seen["proxy_headers"] is True and seen["forwarded_allow_ips"] == "10.0.0.5,10.0.1.0/24"


def test_serve_turns_the_access_log_off_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: uvicorn's access log writes a line per request on the event loop; ACCESS_LOG=false
    turns it off (it is on by default, as uvicorn's is)."""
    import uvicorn

    import cli

    seen: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("ACCESS_LOG", raising=False)
    assert cli.main(["serve"]) == 0
    assert seen["access_log"] is True
    monkeypatch.setenv("ACCESS_LOG", "false")
    assert cli.main(["serve"]) == 0
    assert seen["access_log"] is False
