"""The primary financial statements, as filings title them and as questions name them.

A filing prints a line item in several tables: "Cost of sales" in the income statement and again in
a note on stock-based compensation; "Capital expenditures" in the cash flow statement and in a
segment table. An analyst's "COGS" or "capex" means the statement's row, and a question that says
"shown in the cash flow statement" says which table to read. Filings title those tables in a few
standard ways (Regulation S-X names: statements of operations, income or earnings; balance sheets
or statements of financial position; statements of cash flows), whatever the company. Titles are
compared with their spaces removed: text laid out letter by letter ("Balance Shee t") still reads.
"""

from __future__ import annotations

from collections.abc import Set

from lexicon import STATEMENT_TITLE_PATTERNS, STATEMENT_TITLES, STATEMENTS_NAMED

# What a row adds to how well it answers when its table is a statement the question says to read. A
# primary statement the question does not name adds nothing: questions about a note's rows (the
# synthetic set, evals/results/facts_lookup.md) then lose their row to the statement's.
NAMED = 0.8
# kind -> the title's letters, spaces removed (lexicon.py declares them, with how questions name them)
TITLES: dict[str, str] = STATEMENT_TITLES
# every primary statement's title, as a Postgres regular expression over the caption with spaces removed
ANY_TITLE = "|".join(f"(?:{p})" for p in TITLES.values())


def compact(text: str) -> str:
    return "".join((text or "").lower().split())


def statement_of(caption: str) -> str:
    """The primary statement a table's caption titles ("income", "balance", "cash"), "" for any other table."""
    letters = compact(caption)
    for kind, pattern in STATEMENT_TITLE_PATTERNS.items():
        if pattern.search(letters):
            return kind
    return ""


def named_statements(question: str) -> set[str]:
    """The statements a question says to read ("shown in the balance sheet")."""
    return {kind for kind, pattern in STATEMENTS_NAMED.items() if pattern.search(question or "")}


def titles(kinds: set[str]) -> str:
    """The Postgres regular expression matching the titles of `kinds` (all primary statements when empty)."""
    return "|".join(f"(?:{TITLES[k]})" for k in sorted(kinds)) if kinds else ANY_TITLE


def preference(kind: str, named: Set[str]) -> float:
    """What a row of statement `kind` ("" for none) adds for a question naming the statements `named`."""
    return NAMED if kind and kind in named else 0.0
