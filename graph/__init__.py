"""The corrective-RAG graph. `from graph.graph import graph` for the compiled graph.

Kept import-light on purpose: nodes import `graph.state` and `graph.configuration`, so this
package must not import `graph.graph` (which imports the nodes) at import time.
"""
