"""The corrective-RAG graph, in layers that import only downward:

    stream.py, outcome.py  how callers run it and read its result
    builder.py             the wiring: the only module that imports the nodes (`graph.builder.graph`)
    nodes/                 one module per node
    state.py, configuration.py, context.py, prompts.py, citations.py   what the nodes share
"""
