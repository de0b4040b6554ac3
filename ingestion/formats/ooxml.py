"""Office Open XML packages (Word, PowerPoint, Excel): a ZIP container whose main part says which.

The sniffing rules docx.py, pptx.py and xlsx.py share, and the two refusals around them: a ZIP that
none of them claims (a renamed archive) and a legacy binary Office file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ingestion.errors import IngestError
from ingestion.formats.base import Format, Limits, Progress, Refusal, Sample, is_zip, or_list
from ingestion.units import Parsed

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAX_PARTS = 20_000


def package(main_part: str, name: str) -> Callable[[Sample], bool]:
    """The sniffing rule of the format whose main part is `main_part`: a package that has it and
    whose parts unpack within OFFICE_MAX_UNPACKED_MB, unencrypted."""

    def sniff(sample: Sample) -> bool:
        entries = sample.zip_entries
        if entries is None:
            return False
        names = {i.filename for i in entries}
        if main_part not in names or "[Content_Types].xml" not in names:
            return False
        # Declared sizes bound what zipfile will inflate, so summing them catches a zip bomb before any
        # part is read (a part that inflates past its declared size fails its read).
        unpacked = sum(i.file_size for i in entries)
        if unpacked > sample.max_unpacked_mb * 1024 * 1024 or len(entries) > MAX_PARTS:
            raise IngestError(
                f"the {name} file unpacks to {unpacked / 2**20:,.0f} MB in {len(entries):,} parts, over the "
                f"{sample.max_unpacked_mb:g} MB limit (OFFICE_MAX_UNPACKED_MB); a file this size is a zip bomb "
                "or needs splitting"
            )
        if any(i.flag_bits & 0x1 for i in entries):
            raise IngestError(f"the {name} file is encrypted (password protected); upload a decrypted copy")
        return True

    return sniff


def parser(sniff: Callable[[Sample], bool], name: str, label: str,
           read: Callable[[Path, Limits], Parsed]) -> Callable[[Path, bytes, Limits, Progress | None], Parsed]:
    """`read` with the package checked again first (the stored file is what gets parsed) and the
    libraries' many exceptions on damaged parts turned into one reason."""

    def parse(path: Path, data: bytes, limits: Limits, progress: Progress | None) -> Parsed:
        if not sniff(Sample(data, max_unpacked_mb=limits.max_unpacked_mb)):
            raise IngestError(f"the stored file is no longer a {name} file; upload it again")
        try:
            return read(path, limits)
        except (IngestError, MemoryError):
            raise
        except Exception as exc:  # the libraries raise many types on damaged parts
            raise IngestError(f"the {label} file is damaged and cannot be read: {exc}") from exc

    return parse


def preload() -> None:
    """What the Office parsers import, loaded before the sandbox caps memory."""
    import docx  # noqa: F401
    import openpyxl  # noqa: F401
    import pptx  # noqa: F401

    from ingestion.formats import office  # noqa: F401


def _not_a_package(formats: Sequence[Format]) -> str:
    return f"a ZIP archive that is not a {or_list([f.label for f in formats if f.container == 'zip'])} file"


# After every package format: a ZIP none of them claimed.
OTHER_ZIP = Refusal("zip", lambda sample: is_zip(sample.head), _not_a_package)
LEGACY = Refusal("legacy-office", lambda sample: sample.head.startswith(OLE2_MAGIC),
                 lambda formats: "a legacy binary Office file (.doc/.xls/.ppt); save it in the current format",
                 early=lambda head: head.startswith(OLE2_MAGIC))
