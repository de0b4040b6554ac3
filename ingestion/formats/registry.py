"""The accepted formats and the refusals, in sniffing order: the one list everything reads.

Sniffing walks RULES top down and the first rule that claims a file decides: PDF by its header;
Word, PowerPoint, Excel by their package's main part (in that order, so a package holding two main
parts is Word); a ZIP none of them claims, and a legacy binary Office file, are refused; HTML by its
markup or name, Markdown by its name, anything else that decodes as text is plain text. A file no
rule claims is refused. Adding a format: its module, and its line here (docs/formats.md).
"""

from __future__ import annotations

from ingestion.formats import docx, html, markdown, ooxml, pdf, pptx, text, xlsx
from ingestion.formats.base import Format, Refusal, or_list

Rule = Format | Refusal

RULES: list[Rule] = [
    pdf.FORMAT,
    docx.FORMAT,
    pptx.FORMAT,
    xlsx.FORMAT,
    ooxml.OTHER_ZIP,
    ooxml.LEGACY,
    html.FORMAT,
    markdown.FORMAT,
    text.FORMAT,
]

UNKNOWN_SUFFIX = "bin"  # a stored file of a format this process does not know


def formats() -> list[Format]:
    """The accepted formats, in sniffing order."""
    return [rule for rule in RULES if isinstance(rule, Format)]


def find(name: str) -> Format | None:
    return next((f for f in formats() if f.name == name), None)


def get(name: str) -> Format:
    found = find(name)
    if found is None:
        raise KeyError(f"unknown format {name!r}")
    return found


def register(rule: Rule, *, before: str | None = None) -> None:
    """Add a rule, before the rule named `before` (at the end when None). For a format known to
    every process, add its line to RULES instead: the parsing sandbox imports this module afresh."""
    if any(r.name == rule.name for r in RULES):
        raise ValueError(f"a sniffing rule named {rule.name!r} is registered already")
    at = len(RULES) if before is None else next(i for i, r in enumerate(RULES) if r.name == before)
    RULES.insert(at, rule)


def unregister(name: str) -> None:
    RULES[:] = [r for r in RULES if r.name != name]


def accepted() -> str:
    """"PDF, Word (.docx), ... or plain text": what a refusal lists."""
    return or_list([f.accepted for f in formats()])


def suffix(name: str) -> str:
    """The suffix of a stored file of format `name`, without the dot."""
    found = find(name)
    return found.suffixes[0].lstrip(".") if found else UNKNOWN_SUFFIX


def media_type(name: str) -> str:
    found = find(name)
    return found.media_type if found else "application/octet-stream"


def served_type(name: str) -> str:
    """The Content-Type a download of format `name` is served with (text types name UTF-8, as the
    file route always has)."""
    kind = media_type(name)
    return f"{kind}; charset=utf-8" if kind.startswith("text/") else kind
