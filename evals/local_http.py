"""Stand-in HTTP services on 127.0.0.1 at a free port: the load test's model, the tests' fakes.

`serve(Handler)` starts a threaded server in a daemon thread; `url(server)` and `stop(server)`
go with it. `JSONHandler` is a quiet request handler that answers JSON with a length.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JSONHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet: the test output is the log
        pass

    def send_json(self, status: int, payload: Any) -> None:  # any JSON value
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


def stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
