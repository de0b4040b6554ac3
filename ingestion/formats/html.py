"""HTML: text with HTML markup (or a name that says HTML), read by BeautifulSoup, a unit per heading section."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats.base import SNIFF_BYTES, Format, Limits, Progress, Sample, might_be_text
from ingestion.units import Parsed

SUFFIXES = (".html", ".htm", ".xhtml")
MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<meta ", b"<title")


def looks_like_html(head: bytes) -> bool:
    lowered = head.lstrip().lower()
    return lowered.startswith((b"<!doctype html", b"<html")) or any(m in lowered[:2048] for m in MARKERS)


def sniff(sample: Sample) -> bool:
    text = sample.text
    return text is not None and (looks_like_html(text[:SNIFF_BYTES].encode("utf-8", "replace"))
                                 or sample.named(SUFFIXES))


def parse(path: Path, data: bytes, limits: Limits, progress: Progress | None) -> Parsed:
    from ingestion.formats import web  # bs4 loads only where files are parsed (preload)

    return web.parse_html(data)


def preload() -> None:
    import bs4  # noqa: F401
    import markdown_it  # noqa: F401

    from ingestion.formats import web  # noqa: F401


FORMAT = Format(
    name="html", label="HTML", accepted="HTML", suffixes=SUFFIXES, media_type="text/html", unit="section",
    sniff=sniff, might_be=might_be_text, parse=parse, preload=preload,
)
