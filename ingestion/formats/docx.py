"""Word (.docx): the package whose main part is word/document.xml, a unit per heading section."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats import office, ooxml
from ingestion.formats.base import Format, Limits, is_zip
from ingestion.units import Parsed


def read(path: Path, limits: Limits) -> Parsed:
    return office.parse_docx(path)


sniff = ooxml.package("word/document.xml", "docx")

FORMAT = Format(
    name="docx", label="Word", accepted="Word (.docx)", suffixes=(".docx",),
    media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document", unit="section",
    sniff=sniff, might_be=is_zip, parse=ooxml.parser(sniff, "docx", "Word", read), preload=ooxml.preload,
    limits=("office_max_unpacked_mb",), container="zip",
)
