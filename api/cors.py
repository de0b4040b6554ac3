"""The request headers a browser may send cross-origin and the response headers its script may read:
one list for the app's CORS (CORS_ORIGINS) and for the edge recipe (deploy/nginx, whose template
spells the same lists out; tests/server/test_edge.py holds them equal).

Beyond the API's own (Authorization, Content-Type, X-Request-ID): a browser MCP client's streamable
HTTP headers (the protocol version, the session id, Last-Event-ID to resume a stream; it reads the
session id back) and the official OpenAI SDKs' (their organisation and project, and the X-Stainless
telemetry each request carries), without which a browser refuses to send the request at all.
"""

from __future__ import annotations

ALLOW_HEADERS = (
    "Authorization", "Content-Type", "Accept", "X-Request-ID", "Last-Event-ID",
    # MCP streamable HTTP (the official SDKs' clients)
    "MCP-Protocol-Version", "Mcp-Session-Id",
    # the OpenAI SDKs (Python and JavaScript)
    "OpenAI-Organization", "OpenAI-Project", "OpenAI-Beta", "X-Stainless-Arch", "X-Stainless-Async",
    "X-Stainless-Lang", "X-Stainless-OS", "X-Stainless-Package-Version", "X-Stainless-Read-Timeout",
    "X-Stainless-Retry-Count", "X-Stainless-Runtime", "X-Stainless-Runtime-Version", "X-Stainless-Timeout",
    "X-Stainless-Helper-Method")
EXPOSE_HEADERS = ("X-Highlighted-Lines", "X-Highlight-Box", "Retry-After", "X-Request-ID", "Mcp-Session-Id",
                  "WWW-Authenticate")
