"""The address-space cap of a parsing child process (ingestion/sandbox.py).

The soft limit is the cap; the hard limit stays where it was, so trusted loading that needs more
address space than any file should (importing a library, loading the OCR models) lifts the soft
limit for its duration. Nothing a file contains runs while it is lifted.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator

_cap: int | None = None


def cap(megabytes: int) -> None:
    global _cap
    _cap = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_cap, hard))


@contextlib.contextmanager
def lifted() -> Iterator[None]:
    """Trusted loading without the cap (a no-op outside a capped process)."""
    if _cap is None:
        yield
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (_cap, hard))
