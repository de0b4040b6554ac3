"""The server's routes, one module per group; `server.py` mounts them (its `add_routes`)."""
