"""What ships in deploy/ checked by the tools an operator runs: the alert rules with Debian's promtool
(`check rules`, and `test rules` over alerts.test.yml's made-up series, so each rule fires when it
should), and the systemd units with `systemd-analyze verify`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
PROMTOOL = shutil.which("promtool")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(PROMTOOL is None, reason="no promtool (apt-get install prometheus; .ci/run installs it)")
def test_the_alert_rules_are_valid_and_fire_over_their_unit_tests() -> None:
    assert PROMTOOL is not None
    folder = DEPLOY / "observability"
    checked = run(PROMTOOL, "check", "rules", "alerts.yml", cwd=folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = run(PROMTOOL, "test", "rules", "alerts.test.yml", cwd=folder)
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
    # every rule in the file has a unit test that expects it to fire
    import yaml

    rules = {r["alert"] for g in yaml.safe_load((folder / "alerts.yml").read_text())["groups"] for r in g["rules"]}
    tests = yaml.safe_load((folder / "alerts.test.yml").read_text())["tests"]
    fired = {case["alertname"] for t in tests for case in t["alert_rule_test"] if case["exp_alerts"]}
    assert {"ThotqenDatabaseDown", "ThotqenLLMLinkFailures", "ThotqenAnswerLatencyHigh"} <= rules
    assert rules == fired, rules - fired


SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
SHIPPED_BIN = "/opt/thotqen/.venv/bin/thotqen"


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="no systemd-analyze (apt-get install systemd; .ci/run installs it)")
def test_the_systemd_units_verify(tmp_path: Path) -> None:
    """`systemd-analyze verify` over the shipped units (the worker's template as an instance), their
    ExecStart pointed at this checkout's `thotqen` (verify checks that it is executable). It exits 0
    on a key it does not know or a value it cannot parse, so any warning fails the test too."""
    import sys

    assert SYSTEMD_ANALYZE is not None
    here = Path(sys.executable).parent / "thotqen"
    assert here.exists(), here
    units = sorted((DEPLOY / "systemd").glob("*.service"))
    assert {u.name for u in units} == {"thotqen-serve.service", "thotqen-worker@.service", "thotqen-beat.service"}
    checked = []
    for unit in units:
        text = unit.read_text()
        assert f"ExecStart={SHIPPED_BIN} " in text, unit.name
        name = unit.name.replace("@.", "@1.")
        (tmp_path / name).write_text(text.replace(SHIPPED_BIN, str(here)))
        checked.append(f"./{name}")
    res = run(SYSTEMD_ANALYZE, "verify", "--man=no", *checked, cwd=tmp_path)
    assert res.returncode == 0 and not res.stderr.strip() and not res.stdout.strip(), res.stdout + res.stderr
    serve = (DEPLOY / "systemd" / "thotqen-serve.service").read_text()
    # the drain's grace (SHUTDOWN_GRACE_S, 90 s) fits before systemd's SIGKILL
    assert "TimeoutStopSec=100" in serve and "thotqen serve" in serve
    assert "thotqen beat" in (DEPLOY / "systemd" / "thotqen-beat.service").read_text()
