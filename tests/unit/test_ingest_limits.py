"""Issue 26: an upload's text check never decodes it in one call (the parsing child's limits:
tests/test_ingest_limits.py)."""

from __future__ import annotations

import pytest


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
