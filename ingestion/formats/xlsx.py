"""Excel (.xlsx): the package whose main part is xl/workbook.xml, a unit per sheet or block of its rows."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats import office, ooxml
from ingestion.formats.base import Format, Limits, is_zip
from ingestion.units import Parsed


def read(path: Path, limits: Limits) -> Parsed:
    return office.parse_xlsx(path, max_rows=limits.sheet_max_rows)


sniff = ooxml.package("xl/workbook.xml", "xlsx")

FORMAT = Format(
    name="xlsx", label="Excel", accepted="Excel (.xlsx)", suffixes=(".xlsx",),
    media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", unit="sheet",
    sniff=sniff, might_be=is_zip, parse=ooxml.parser(sniff, "xlsx", "Excel", read), preload=ooxml.preload,
    limits=("office_max_unpacked_mb", "sheet_max_rows"), container="zip",
)
