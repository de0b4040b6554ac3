"""Container health check of a `thotqen worker`: exit 0 when this host's worker answers a ping
through the broker (compose.yaml's worker healthcheck: `python -m jobqueue.health`). An entry point
of its own: it reads the settings and builds only a publishing Celery app."""

from __future__ import annotations

import socket
import sys

from jobqueue.app import make_app
from settings import Settings


def main() -> int:
    replies = make_app(Settings()).control.ping(timeout=5.0) or []
    mine = [name for reply in replies for name in reply if name.endswith(f"@{socket.gethostname()}")]
    print("ok" if mine else "no worker of this host answered", file=sys.stderr)
    return 0 if mine else 1


if __name__ == "__main__":
    sys.exit(main())
