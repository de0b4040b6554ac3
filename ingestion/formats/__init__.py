"""Every accepted format, parsed into rows on page-like units (ingestion/units.py).

`sniff` tells the format from the bytes; `parse_file` runs that format's parser. Both raise
IngestError with a reason a user can act on (UnsupportedFormat for what is not accepted). What
each format is lives in its own module, listed by ingestion/formats/registry.py.
"""

from __future__ import annotations

from pathlib import Path

from ingestion.errors import IngestError
from ingestion.formats import registry
from ingestion.formats.base import Limits, Progress
from ingestion.formats.sniff import ACCEPTED, sniff
from ingestion.units import Parsed

__all__ = ["ACCEPTED", "Limits", "parse_file", "preload", "sniff"]


def preload(fmt: str) -> None:
    """Import what parsing `fmt` needs (the sandbox does so before it caps its memory)."""
    import lxml.etree  # noqa: F401 - every XML/HTML reader sits on it

    found = registry.find(fmt)
    if found is not None:
        found.preload()


def parse_file(path: Path, fmt: str, limits: Limits, progress: Progress | None = None) -> Parsed:
    found = registry.find(fmt)
    if found is None:
        raise IngestError(f"unknown format {fmt!r}")
    return limits.check(found.parse(path, path.read_bytes(), limits, progress))
