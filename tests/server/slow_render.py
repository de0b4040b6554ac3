"""A page render that waits for a gate before drawing, for tests of the render pool's bounds.

It runs in the pool's child processes (api/heavy.py), so the gate and the record of what ran are
files: the test process opens the gate by creating `open` in the directory, and each render appends
its passage to `ran` as it starts. Importable by the children (tests are a package on their path).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from api.drawing import render_page


def render(gate_dir: str, path: Path, page: int, passage: str, *args: Any, **kwargs: Any) -> Any:
    gate = Path(gate_dir)
    with (gate / "ran").open("a") as f:
        f.write(passage + "\n")
    end = time.monotonic() + 20
    while not (gate / "open").exists() and time.monotonic() < end:
        time.sleep(0.02)
    return render_page(path, page, passage, *args, **kwargs)


def crash(*args: Any, **kwargs: Any) -> Any:
    """A drawing that kills its process, as a MuPDF crash would."""
    import os

    os._exit(3)
