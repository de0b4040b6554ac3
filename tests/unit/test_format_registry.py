"""The format registry drives every consumer: sniffing (full and early), parsing, stored file names
and media types. A format registered in-process is accepted everywhere at once; the built-in ones
keep the order, suffixes and types they had before the registry."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals import pdfs
from ingestion.errors import UnsupportedFormat
from ingestion.formats import ACCEPTED, Limits, parse_file, preload, registry, sniff
from ingestion.formats.base import Format, Sample
from ingestion.formats.sniff import early_refusal
from ingestion.pipeline import stored_file_path
from ingestion.units import Parsed, UnitBuilder
from settings import FLAT, Settings
from tests.support import documents

MAGIC = b"\x00THROWAWAY\x00"  # NULs: no built-in rule would take it for text
PRELOADED: list[str] = []


def _parse(path: Path, data: bytes, limits: Limits, progress: object) -> Parsed:
    out = UnitBuilder()
    out.start("record 1", "Throwaway")
    out.add(data[len(MAGIC):].decode())
    return out.parsed("throwaway")


THROWAWAY = Format(
    name="throwaway", label="Throwaway", accepted="Throwaway (.thr)", suffixes=(".thr", ".throw"),
    media_type="application/x-throwaway", unit="record",
    sniff=lambda sample: sample.data.startswith(MAGIC), might_be=lambda head: head.startswith(MAGIC),
    parse=_parse, preload=lambda: PRELOADED.append("throwaway"), limits=("sheet_max_rows",),
)


@pytest.fixture
def throwaway() -> Iterator[Format]:
    registry.register(THROWAWAY, before="html")
    try:
        yield THROWAWAY
    finally:
        registry.unregister(THROWAWAY.name)


def test_the_sniffing_order_is_the_one_before_the_registry() -> None:
    assert [rule.name for rule in registry.RULES] == [
        "pdf", "docx", "pptx", "xlsx", "zip", "legacy-office", "html", "markdown", "text"]
    assert ACCEPTED == "PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown or plain text"


def test_stored_files_keep_their_suffixes_and_types(tmp_path: Path) -> None:
    # files on disk and in the bucket are named so: a change would lose every stored original
    assert {f.name: registry.suffix(f.name) for f in registry.formats()} == {
        "pdf": "pdf", "docx": "docx", "pptx": "pptx", "xlsx": "xlsx", "html": "html", "markdown": "md", "text": "txt"}
    assert registry.suffix("gone") == "bin" and registry.media_type("gone") == "application/octet-stream"
    settings = Settings(thotqen_home=tmp_path)
    assert stored_file_path(settings, 7, "abc", "markdown") == tmp_path / "files" / "7" / "abc.md"
    assert registry.served_type("markdown") == "text/markdown; charset=utf-8"
    assert registry.served_type("pdf") == registry.media_type("pdf") == "application/pdf"
    assert registry.served_type("xlsx") == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert [f.name for f in registry.formats() if f.page_images] == ["pdf"]


def test_every_declared_limit_is_a_setting() -> None:
    # a field of settings.ingestion read under its own name (what /api/formats shows, upper-cased)
    fields = {flat for flat, place in FLAT.items() if place == ("ingestion", flat)}
    assert all(set(f.limits) <= fields for f in registry.formats())


@pytest.mark.parametrize(("name", "data", "fmt"), [
    ("a.pdf", pdfs.text_pdf(["one", "two"]), "pdf"),
    ("a.docx", documents.docx_bytes(), "docx"),
    ("a.pptx", documents.pptx_bytes([("Plan", ["one"]), ("Cost", ["two"])]), "pptx"),
    ("a.xlsx", documents.xlsx_bytes({"S": [["a", 1]], "T": [["b", 2]]}), "xlsx"),
    ("a.html", b"<html><body><h1>One</h1><p>x</p><h1>Two</h1><p>y</p></body></html>", "html"),
    ("a.md", b"# One\n\nx\n\n# Two\n\ny\n", "markdown"),
    ("a.txt", b"one\ntwo\n", "text"),
])
def test_a_formats_unit_is_what_its_labels_name(tmp_path: Path, name: str, data: bytes, fmt: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    parsed = parse_file(path, sniff(data, name), Limits())
    unit = registry.get(fmt).unit
    labels = [u.label for u in parsed.units]
    assert parsed.format == fmt and labels
    assert all(label.startswith(f"{unit} ") or label == "beginning" for label in labels), labels


def test_a_registered_format_is_accepted_by_sniffing_and_parsed(tmp_path: Path, throwaway: Format) -> None:
    data = MAGIC + b"forty-two widgets"
    assert sniff(data, "anything") == "throwaway"
    assert early_refusal(data[:1024]) is None  # the upload streams on instead of a 415 at the first kilobyte
    with pytest.raises(UnsupportedFormat, match=r"Excel \(\.xlsx\), Throwaway \(\.thr\), HTML"):
        sniff(b"\x7fELF\x02\x01\x01" + bytes(300))  # refusals list it, in its place
    path = tmp_path / "x.thr"
    path.write_bytes(data)
    parsed = parse_file(path, "throwaway", Limits())
    assert [(u.label, u.text) for u in parsed.units] == [("record 1", "forty-two widgets")]
    preload("throwaway")
    assert PRELOADED == ["throwaway"]
    assert registry.suffix("throwaway") == "thr" and registry.served_type("throwaway") == "application/x-throwaway"
    settings = Settings(thotqen_home=tmp_path)
    assert stored_file_path(settings, 1, "h", "throwaway").name == "h.thr"


def test_without_its_registration_the_same_file_is_refused() -> None:
    data = MAGIC + b"forty-two widgets"
    assert early_refusal(data[:1024]) is not None
    with pytest.raises(UnsupportedFormat, match="not a supported format"):
        sniff(data)


def test_a_zip_no_package_format_claims_is_refused_naming_the_package_formats() -> None:
    package = dataclasses.replace(THROWAWAY, name="odt", label="OpenDocument", container="zip",
                                  sniff=lambda sample: False)
    registry.register(package, before="zip")
    try:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("[Content_Types].xml", "<Types/>")
            archive.writestr("content.xml", "<office:document/>")
        with pytest.raises(UnsupportedFormat, match="not a Word, PowerPoint, Excel or OpenDocument file"):
            sniff(out.getvalue(), "notes.odt")
    finally:
        registry.unregister("odt")


def test_a_registered_rule_needs_a_new_name() -> None:
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.get("pdf"))
    assert Sample(b"x", "A.MD").named((".md",))
