"""PowerPoint (.pptx): the package whose main part is ppt/presentation.xml, a unit per slide."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats import office, ooxml
from ingestion.formats.base import Format, Limits, is_zip
from ingestion.units import Parsed


def read(path: Path, limits: Limits) -> Parsed:
    return office.parse_pptx(path)


sniff = ooxml.package("ppt/presentation.xml", "pptx")

FORMAT = Format(
    name="pptx", label="PowerPoint", accepted="PowerPoint (.pptx)", suffixes=(".pptx",),
    media_type="application/vnd.openxmlformats-officedocument.presentationml.presentation", unit="slide",
    sniff=sniff, might_be=is_zip, parse=ooxml.parser(sniff, "pptx", "PowerPoint", read), preload=ooxml.preload,
    limits=("office_max_unpacked_mb",), container="zip",
)
