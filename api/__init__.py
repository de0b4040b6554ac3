"""HTTP routes of the server, one module per group: auth, documents (and jobs), chats, admin.

`server.py` builds the app from these; they reach the graph, ingestion and storage, never the reverse.
"""
