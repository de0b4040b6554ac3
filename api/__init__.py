"""The HTTP server's parts: its routes in `api/routes/` (one module per group: auth, documents and jobs,
chats, /rag, /v1, /mcp, the web app), and here the infrastructure they stand on (authentication and
scopes, limits, the edge's body bounds, errors, paging, schemas, the page renderer's processes).

`server.py` builds the app from these. Routes import the infrastructure, never the reverse; they reach
the graph, ingestion, storage and the job queue, which never import the server.
"""
