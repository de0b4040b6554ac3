"""Graph nodes: one module each, every node a function `(state, config) -> dict`."""
