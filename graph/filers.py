"""Whose a figure is: the names a question uses against the cited documents, their covers' companies
and the owner's other filers (graph/nodes/verify.py reads those through the run's shelf).
"""

from __future__ import annotations

import re

from graph.reading import names_in
from graph.state import Citation
from lexicon import CAPITALS
from lexicon import squashed as _squashed


def names_unmet(question: str, citations: list[Citation], companies: list[str], *,
                filers_only: bool = False) -> list[str]:
    """The names the question uses (graph/reading.py `names_in`) that none of the cited sources,
    their documents' names nor their covers' companies mention: "Nike's revenue" answered from
    another company's statement.

    `filers_only`: the answer states figures of the cited filings' own tables, which are the
    filer's; then a name the question uses, even a lone one ("How much did Tesla spend"), must be
    the filer's (its cover's names and tickers, or the document's name), not merely mentioned in
    its text. The question passes when any of its names or upper-case words ("AMCOR") is."""
    names = names_in(question, lone=filers_only)
    if not names:
        return []
    sources = [*(c.get("name") or "" for c in citations), *companies]
    if not filers_only:
        sources += [c.get("text") or "" for c in citations]
    held = _squashed(" ".join(sources))
    lone = names_in(question, lone=True) + (CAPITALS.findall(question) if filers_only else [])
    return [] if any(_squashed(n) and _squashed(n) in held for n in lone) else names


def names_another_filer(question: str, cited_filers: list[str], all_filers: list[str]) -> list[str]:
    """The question's words in capitals ("AMD") that are another filer's name or ticker among the owner's
    documents, not the cited documents' filer's: "AMD's operating income" answered from Block's table.
    A word in capitals no filer goes by ("EBITDA") says nothing of whose the figure is."""
    cited = {k for n in cited_filers for k in _goes_by(n)}
    everyone = {k for n in all_filers for k in _goes_by(n)}
    # "MGM" is MGM Resorts International's, whether or not that filing printed its ticker
    return [w for w in dict.fromkeys(CAPITALS.findall(question))
            if _squashed(w) in everyone and not any(_squashed(w) in key for key in cited)]


_SUFFIX = frozenset(["inc", "corp", "corporation", "co", "company", "ltd", "plc", "llc", "the", "and", "of"])


def _goes_by(name: str) -> set[str]:
    """A filer's name squashed, and its initials: "Advanced Micro Devices, Inc." goes by "amd" too."""
    words = [w for w in re.findall(r"[A-Za-z0-9][\w&'-]*", name) if w.lower() not in _SUFFIX]
    initials = "".join(w[0] for w in words).lower() if len(words) > 1 else ""
    return {_squashed(name), *([initials] if initials else [])}
