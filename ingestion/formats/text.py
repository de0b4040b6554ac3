"""Plain text: any other file that decodes as text, a unit per run of lines."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats import html
from ingestion.formats.base import Format, Limits, Progress, Sample, might_be_text
from ingestion.units import Parsed


def sniff(sample: Sample) -> bool:
    return sample.text is not None


def parse(path: Path, data: bytes, limits: Limits, progress: Progress | None) -> Parsed:
    from ingestion.formats import web  # the text reader sits with the HTML one (preload)

    return web.parse_text(data)


FORMAT = Format(
    name="text", label="text", accepted="plain text", suffixes=(".txt",), media_type="text/plain", unit="lines",
    sniff=sniff, might_be=might_be_text, parse=parse, preload=html.preload,
)
