"""Learned classifiers with their weights beside them: the guardrail's and the screen's.

    InjectionClassifier.load()    # is a message to the assistant an attack? (injection.py)
    InstructionClassifier.load()  # is a sentence of retrieved text addressed to the model? (instruction.py)

Each is built once per process by whoever runs the graph and handed to the nodes; nothing here
caches. The training scripts (evals/guardrail.py, evals/screen.py) write the weight files here.
"""
