"""Chunking: children stay on one page and under the model's limit; parents cover children once."""

from __future__ import annotations

import pytest

from ingestion.chunk import chunk_rows
from ingestion.parse import Row


def count_words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def rows_for(pages: int, rows_per_page: int, words: int = 12) -> list[Row]:
    return [
        Row(p, " ".join(f"w{p}_{r}_{i}" for i in range(words)), None)
        for p in range(1, pages + 1)
        for r in range(rows_per_page)
    ]


@pytest.fixture
def chunks():
    return chunk_rows(rows_for(pages=6, rows_per_page=40), count_words, title="Report",
                      child_tokens=100, overlap_tokens=24, parent_tokens=600)


def test_no_child_spans_a_page_and_each_knows_it(chunks) -> None:
    for child in chunks.children:
        pages = {word.split("_")[0][1:] for word in child.text.split()}
        assert pages == {str(child.page)}


def test_children_respect_the_token_budget(chunks) -> None:
    assert max(c.tokens for c in chunks.children) <= 100
    assert min(c.tokens for c in chunks.children) > 0


def test_neighbouring_children_on_a_page_overlap(chunks) -> None:
    kids = chunks.children
    same_page = [(a, b) for a, b in zip(kids, kids[1:], strict=False) if a.page == b.page]
    assert same_page
    for a, b in same_page:
        assert b.text.split("\n")[0] in a.text.split("\n")  # b starts with a's trailing row


def test_parents_cover_every_row_once_and_carry_page_ranges(chunks) -> None:
    all_rows = [r.text for r in rows_for(pages=6, rows_per_page=40)]
    parent_rows = [line for p in chunks.parents for line in p.text.split("\n") if line]
    assert parent_rows == all_rows
    for parent in chunks.parents:
        assert parent.page_start == min(c.page for c in parent.children)
        assert parent.page_end == max(c.page for c in parent.children)
        assert parent.tokens <= 600


def test_over_long_row_is_split_not_truncated() -> None:
    long_row = Row(1, " ".join(f"x{i}" for i in range(500)), None)
    out = chunk_rows([long_row], count_words, title="T", child_tokens=100, overlap_tokens=0)
    words = [w for c in out.children for w in c.text.split()]
    assert words == long_row.text.split()
    assert all(c.tokens <= 100 for c in out.children)


def test_a_table_that_fits_is_not_split_across_children() -> None:
    prose = [Row(1, " ".join(f"p{i}_{j}" for j in range(10)), None) for i in range(7)]
    table = [Row(1, f"line item {i} | {i},000 | {i},500", 1) for i in range(8)]  # 6 words a row = 48
    out = chunk_rows(prose + table, count_words, title="T", child_tokens=100, overlap_tokens=0)
    holding = [c for c in out.children if "line item" in c.text]
    assert len(holding) == 1
    assert all(f"line item {i} |" in holding[0].text for i in range(8))


def test_headings_name_the_document_and_page_title() -> None:
    rows = [Row(1, "Consolidated Balance Sheets", None), Row(1, "Cash | 100", 1),
            Row(2, "Notes to the statements", None), Row(2, "text " * 5, None)]
    out = chunk_rows(rows, count_words, title="ACME 2020 10K")
    assert out.children[0].heading.startswith("ACME 2020 10K — Consolidated Balance Sheets")
    assert out.children[-1].heading.startswith("ACME 2020 10K — Notes to the statements")
