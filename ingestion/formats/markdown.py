"""Markdown: text whose name says Markdown, rendered by markdown-it-py and read as HTML, a unit per section."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats import html
from ingestion.formats.base import Format, Limits, Progress, Sample, might_be_text
from ingestion.units import Parsed

SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")


def sniff(sample: Sample) -> bool:
    return sample.text is not None and sample.named(SUFFIXES)


def parse(path: Path, data: bytes, limits: Limits, progress: Progress | None) -> Parsed:
    from ingestion.formats import web  # markdown-it and bs4 load only where files are parsed (preload)

    return web.parse_markdown(data)


FORMAT = Format(
    name="markdown", label="Markdown", accepted="Markdown", suffixes=SUFFIXES, media_type="text/markdown",
    unit="section", sniff=sniff, might_be=might_be_text, parse=parse, preload=html.preload,
)
