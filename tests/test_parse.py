"""Parsing: every bad file gets a clear reason (a page with nothing to read goes through the packaged
ONNX OCR first; page order, reading order and tables: tests/unit/test_parse.py)."""

from __future__ import annotations

import pytest

from evals import pdfs
from ingestion.errors import IngestError
from ingestion.parse import parse_pdf


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"PK\x03\x04 this is a zip file", "not a PDF"),
        (b"hello world, plain text", "not a PDF"),
        (pdfs.encrypted_pdf(), "encrypted"),
        (pdfs.image_only_pdf(), "no text found"),
        (pdfs.text_pdf(["some text that will be cut"] * 3)[:400], "truncated"),
    ],
    ids=["empty", "zip", "text", "encrypted", "nothing-to-read", "truncated"],
)
def test_bad_files_fail_with_a_clear_reason(data: bytes, reason: str) -> None:
    with pytest.raises(IngestError, match=reason):
        parse_pdf(data)
