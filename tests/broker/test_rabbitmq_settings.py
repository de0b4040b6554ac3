"""compose.yaml's RabbitMQ settings, applied to a real node: the image cannot run here, but the
settings it passes to the broker can (Debian's rabbitmq-server; skipped, saying so, without it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evals.brokers import RabbitMQServer, rabbitmq_available

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not rabbitmq_available(), reason="RabbitMQ is not installed (.ci/run installs it)")


def test_compose_broker_settings_take_effect(tmp_path: Path) -> None:
    args = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["rabbitmq"]["environment"][
        "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"]
    timeout_ms = int(args.split()[-1])
    # acks_late keeps a long job's delivery unacknowledged; RabbitMQ's default 30 min would cut it
    assert timeout_ms >= 3_600_000
    node = RabbitMQServer(tmp_path, {"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": args})
    try:
        assert node.ctl("eval", "application:get_env(rabbit, consumer_timeout).").strip() == f"{{ok,{timeout_ms}}}"
    finally:
        node.stop()
