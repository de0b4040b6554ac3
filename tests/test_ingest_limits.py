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
from tests import documents


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


def test_a_document_making_more_chunks_than_its_cap_fails_before_embedding(settings, embedder) -> None:  # noqa: ANN001
    from ingestion.pipeline import chunk_step
    from ingestion.units import PageUnit, Parsed, Row

    words = " ".join(f"word{n}" for n in range(20_000))  # a few kilobytes packed, thousands of chunks
    parsed = Parsed("text", [PageUnit(1, "line 1")], [Row(1, words, None)])
    capped = settings.model_copy(update={"document_max_chunks": 50})
    with pytest.raises(IngestError, match="DOCUMENT_MAX_CHUNKS"):
        chunk_step(capped, embedder, "words.txt", parsed, lambda stage, fraction: None)
    assert len(chunk_step(settings, embedder, "words.txt", parsed, lambda stage, fraction: None).chunks.children) > 50


class _Watched(bytes):
    """Bytes that note the size of every decode called on them (a slice or a view is not watched)."""

    decoded: list[int]

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        self.decoded.append(len(self))
        return super().decode(encoding, errors)


@pytest.mark.parametrize("head", [b"", "\ufeff".encode(), b"caf\xe9 "])  # UTF-8, a BOM, a guessed encoding
def test_checking_an_upload_for_text_never_decodes_it_in_one_call(head: bytes) -> None:
    """Issue 26: the upload's format check decoded the whole file in one call, twice an upload, in the
    server's process: 50 ms a time holding the interpreter lock at UPLOAD_MAX_MB, every other
    request's. Sniffing now checks it a piece (base.PIECE) at a time and keeps only its head."""
    from ingestion.formats.base import PIECE, SNIFF_BYTES, decode_text, text_head
    from ingestion.pipeline import check_file
    from settings import Settings

    data = _Watched(head + b"a line of an upload just under the cap\n" * (4 * PIECE // 39))
    data.decoded = []
    assert check_file(Settings(), "big.txt", data) == "text"
    assert not [n for n in data.decoded if n > PIECE], data.decoded  # was: [len(data)]
    whole = decode_text(bytes(data))
    assert whole is not None and text_head(bytes(data)) == whole[:SNIFF_BYTES]  # the same judgement
