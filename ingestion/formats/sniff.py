"""Which format a file is, from its bytes (the name only tells HTML and Markdown from plain text).

The rules and their order are the registry's (ingestion/formats/registry.py): the first rule that
claims the file decides, a format by returning its name, a refusal by raising UnsupportedFormat.
"""

from __future__ import annotations

from ingestion.errors import IngestError, UnsupportedFormat
from ingestion.formats import registry
from ingestion.formats.base import Format, Sample

ACCEPTED = registry.accepted()  # the built-in formats, for texts fixed at import (the OpenAPI document)
NOT_SUPPORTED = "not a supported format"


def refuse(what: str) -> UnsupportedFormat:
    return UnsupportedFormat(f"{what}; accepted: {registry.accepted()}")


def sniff(data: bytes, name: str = "", *, max_unpacked_mb: float = 200) -> str:
    """The format of `data` (a registered format's name); UnsupportedFormat for anything else."""
    if not data:
        raise IngestError("the file is empty")
    sample = Sample(data, name, max_unpacked_mb=max_unpacked_mb)
    for rule in list(registry.RULES):
        if isinstance(rule, Format):
            if rule.sniff(sample):
                return rule.name
        elif rule.matches(sample):
            raise refuse(rule.what(registry.formats()))
    raise refuse(NOT_SUPPORTED)


def early_refusal(head: bytes) -> UnsupportedFormat | None:
    """The refusal a file's first bytes already justify while an upload streams in (None: read it all
    and check it in full)."""
    for rule in list(registry.RULES):
        if isinstance(rule, Format):
            if rule.might_be(head):
                return None
        elif rule.early is not None and rule.early(head):
            return refuse(rule.what(registry.formats()))
    return refuse(NOT_SUPPORTED)
