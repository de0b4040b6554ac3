"""Services that answer questions for the HTTP layer: a chat turn (cache, graph, saved messages)."""
