"""Issue 26: text that unpacks to far more than its file fails its job with the reason, inside the
parsing child's limits, instead of being tokenised and chunked in the server's process."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from ingestion.errors import IngestError
from ingestion.formats.base import Limits
from ingestion.sandbox import extract
from tests.support import documents


def one_huge_cell(chars: int) -> bytes:
    """A workbook whose one text cell holds `chars` characters (Excel's writers stop at 32,767; the
    format does not), packed to kilobytes."""
    marker = "MARKER" * 3
    small = zipfile.ZipFile(io.BytesIO(documents.xlsx_bytes({"Sheet": [["note", marker]]})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        for item in small.infolist():
            data = small.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                assert marker.encode() in data
                data = data.replace(marker.encode(), b"x" * chars)
            book.writestr(item.filename, data)
    return out.getvalue()


def test_a_tiny_workbook_whose_cell_unpacks_to_megabytes_fails_in_the_sandbox(tmp_path: Path) -> None:
    book = tmp_path / "cell.xlsx"
    book.write_bytes(one_huge_cell(20_000_000))
    assert book.stat().st_size < 200_000  # tens of MB of text from a file of kilobytes
    started = time.monotonic()
    with pytest.raises(IngestError, match="ROW_MAX_CHARS"):
        extract(book, "xlsx", Limits(), timeout_s=300, memory_mb=2048)
    assert time.monotonic() - started < 120


def test_a_document_over_its_character_budget_fails(tmp_path: Path) -> None:
    text = tmp_path / "words.txt"
    text.write_text(("lorem ipsum dolor sit amet " * 40 + "\n") * 2000)  # 2.2 million characters
    with pytest.raises(IngestError, match="DOCUMENT_MAX_CHARS"):
        extract(text, "text", Limits(document_max_chars=1_000_000), timeout_s=300, memory_mb=2048)
    parsed = extract(text, "text", Limits(), timeout_s=300, memory_mb=2048)
    assert sum(len(r.text) for r in parsed.rows) > 2_000_000


def test_a_document_making_more_chunks_than_its_cap_fails_before_embedding(settings, embedder) -> None:
    from ingestion.pipeline import chunk_step
    from ingestion.units import PageUnit, Parsed, Row

    words = " ".join(f"word{n}" for n in range(20_000))  # a few kilobytes packed, thousands of chunks
    parsed = Parsed("text", [PageUnit(1, "line 1")], [Row(1, words, None)])
    capped = settings.model_copy(update={"document_max_chunks": 50})
    with pytest.raises(IngestError, match="DOCUMENT_MAX_CHUNKS"):
        chunk_step(capped, embedder, "words.txt", parsed, lambda stage, fraction: None)
    assert len(chunk_step(settings, embedder, "words.txt", parsed, lambda stage, fraction: None).chunks.children) > 50
