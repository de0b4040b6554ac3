"""Table cells (sql/024_table_cells.sql): written with a document's chunks, found by label and period.

Every read takes the owner; a stranger's document ids find nothing. A cell's value is stored as
written and as a number in the table's own scale (`value`), with the scale beside it, so
`amount` = value × scale is the figure in units ("1,693,954" under "in thousands" is 1.693954e9).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import psycopg
from psycopg.rows import class_row

from storage.rows import scalar
from storage.tenancy import owners_only
from storage.workspaces import Owners, owner_ids

# Bump when the rules that read tables (ingestion/tables.py) change so much that stored cells should
# be read again: `thotqen reindex --tables` redoes every document stored under an older version.
TABLES_VERSION = 4  # 2: a table is titled by the primary statement a caption line names (storage/statements.py);
# 3: running headers and tables of contents give no cells (ingestion/tables.py)
# 4: a page number running with the pages beside a changing title, a heading's number ("8.1. WHAT ...")
# and page references after dot leaders give none either

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class CellRow:
    """One value cell of a table, as ingestion reads it."""

    page: int
    table_key: str  # "page.n": the n-th table on that page
    row_index: int  # the row's place among the document's rows
    label: str  # the row's label ("" for a sum row without one)
    value_text: str  # as written: "(1,234)", "—", "12.5%"
    value: float  # the sign applied, in the table's scale; a dash is 0
    scale: float = 1.0  # 1e3 for "in thousands"; 1 for per-share amounts and percentages
    unit: str = ""  # USD, USD/share, %, shares, ratio, or "" when the table does not say
    section: tuple[str, ...] = ()  # label rows above it inside the table, outermost first
    caption: str = ""  # the table's title ("Consolidated Statements of Cash Flows")
    column: int | None = None  # 0-based value column; None when it could not be placed
    period_label: str = ""  # the column's header as written
    period_kind: str | None = None  # year | quarter | ytd | instant
    fiscal_year: int | None = None
    quarter: int | None = None
    period_end: date | None = None
    months: int | None = None
    scale_words: str = ""  # the caption's phrase ("in millions, except per share amounts")
    box: Box | None = None  # the value on its PDF page, points from the top-left
    row_box: Box | None = None  # the whole row
    child_ord: int | None = None  # the child chunk holding the row (child_chunks.ord)


@dataclass(frozen=True)
class FoundCell:
    """A stored cell as a query returns it, with its document and chunk."""

    id: int
    document_id: uuid.UUID
    document_name: str
    page: int
    table_key: str
    row_index: int
    label: str
    section: list[str]
    caption: str
    column_index: int | None
    period_label: str
    period_kind: str | None
    fiscal_year: int | None
    quarter: int | None
    period_end: date | None
    months: int | None
    scale: float
    unit: str
    scale_words: str
    value_text: str
    value: float
    box: list[float] | None
    row_box: list[float] | None
    child_id: int | None
    parent_id: int | None
    rank: float = field(default=0.0)

    @property
    def amount(self) -> float:
        """The value in units (the table's scale applied)."""
        return self.value * self.scale

    @property
    def path(self) -> str:
        """Section path and label, as a reader would say it ("Current assets › Inventories")."""
        return " › ".join([*self.section, self.label] if self.label else self.section)


COLUMNS = ("document_id, owner_id, page, table_key, row_index, label, section, section_text, caption, column_index,"
           " period_label, period_kind, fiscal_year, quarter, period_end, months, scale, unit, scale_words,"
           " value_text, value, box, row_box, child_ord")
SELECT = (
    "select c.id, c.document_id, d.name as document_name, c.page, c.table_key, c.row_index, c.label,"
    " c.section, c.caption, c.column_index, c.period_label, c.period_kind, c.fiscal_year, c.quarter,"
    " c.period_end, c.months, c.scale, c.unit, c.scale_words, c.value_text, c.value, c.box, c.row_box,"
    " ch.id as child_id, ch.parent_id"
)
FROM = (" from table_cells c join documents d on d.id = c.document_id"
        " left join child_chunks ch on ch.document_id = c.document_id and ch.ord = c.child_ord")
# ts_rank weights for {D, C, B, A}: the label (A) counts most, then the section path (B), then the caption (C).
WEIGHTS = "{0.05, 0.2, 0.5, 1.0}"


def replace_cells(conn: psycopg.Connection, *, owner_id: int, document_id: uuid.UUID,
                  cells: Sequence[CellRow]) -> None:
    """A document's cells, replacing any it had, and the rules version they were read with; call
    inside the caller's transaction (with its chunks)."""
    conn.execute("delete from table_cells where document_id = %s", (document_id,))
    with conn.cursor() as cur, cur.copy(f"copy table_cells ({COLUMNS}) from stdin") as copy:
        for c in cells:
            copy.write_row((document_id, owner_id, c.page, c.table_key, c.row_index, c.label, list(c.section),
                            " › ".join(c.section),
                            c.caption, c.column, c.period_label, c.period_kind, c.fiscal_year, c.quarter,
                            c.period_end, c.months, c.scale, c.unit, c.scale_words, c.value_text, c.value,
                            list(c.box) if c.box else None, list(c.row_box) if c.row_box else None, c.child_ord))
    conn.execute("update documents set tables_version = %s where id = %s", (TABLES_VERSION, document_id))


@owners_only
def find_cells(conn: psycopg.Connection, *, owner_id: Owners, text: str,
               document_ids: Sequence[uuid.UUID] | None = None, fiscal_year: int | None = None,
               quarter: int | None = None, captions: str | None = None, limit: int = 50) -> list[FoundCell]:
    """The owner's cells whose label, section path or caption shares a word with `text`, best first:
    cells matching every word, then by full-text rank (the label weighing most), then a label that
    is the text itself; optionally within some documents, a fiscal year and quarter, and tables whose
    caption, lower-cased with its spaces removed, matches the regular expression `captions`."""
    conditions = ["c.owner_id = any(%(owner)s::bigint[])", "d.owner_id = c.owner_id"]
    params: dict[str, object] = {"owner": owner_ids(owner_id), "text": text, "limit": limit, "weights": WEIGHTS}
    if document_ids is not None:
        conditions.append("c.document_id = any(%(docs)s)")
        params["docs"] = list(document_ids)
    if fiscal_year is not None:
        conditions.append("c.fiscal_year = %(fy)s")
        params["fy"] = fiscal_year
    if quarter is not None:
        conditions.append("c.quarter = %(quarter)s")
        params["quarter"] = quarter
    if captions is not None:
        conditions.append("regexp_replace(lower(c.caption), '\\s+', '', 'g') ~ %(captions)s")
        params["captions"] = captions
    sql = (
        f"{SELECT}, ((c.tsv @@ q.every_word)::int + ts_rank(%(weights)s::real[], c.tsv, q.any_word)"
        " + (lower(c.label) = lower(%(text)s))::int)::float8 as rank"
        " from (select plainto_tsquery('english', %(text)s) as every_word,"
        " replace(plainto_tsquery('english', %(text)s)::text, '&', '|')::tsquery as any_word) q"
        # the match by its index under row security (sql/functions/tenant_cell_matches.sql)
        " cross join tenant_cell_matches(q.any_word) t join table_cells c on c.id = t.id"
        " join documents d on d.id = c.document_id"
        " left join child_chunks ch on ch.document_id = c.document_id and ch.ord = c.child_ord"
        f" where {' and '.join(conditions)}"
        " order by rank desc, c.document_id, c.page, c.row_index, c.column_index limit %(limit)s"
    )
    if not text.strip() or not scalar(conn.execute("select plainto_tsquery('english', %s)::text <> ''", (text,)), bool):
        return []
    with conn.cursor(row_factory=class_row(FoundCell)) as cur:
        return cur.execute(sql, params).fetchall()


@owners_only
def document_cells(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID,
                   page: int | None = None) -> list[FoundCell]:
    """Every cell of one of the owner's documents (on one page), in reading order."""
    sql = (f"{SELECT}, 0::float8 as rank{FROM}"
           " where c.owner_id = any(%s::bigint[]) and d.owner_id = c.owner_id and c.document_id = %s"
           " and (%s::int is null or c.page = %s)"
           " order by c.page, c.row_index, c.column_index")
    with conn.cursor(row_factory=class_row(FoundCell)) as cur:
        return cur.execute(sql, (owner_ids(owner_id), document_id, page, page)).fetchall()


@dataclass(frozen=True)
class TablesPending:
    owner_id: int
    username: str
    document_id: uuid.UUID
    name: str
    content_hash: str
    format: str


def documents_to_retable(conn: psycopg.Connection) -> list[TablesPending]:
    """Ready documents whose cells were never read, or were read by older rules (an operator's command)."""
    return [TablesPending(*row) for row in conn.execute(
        "select d.owner_id, u.username, d.id, d.name, d.content_hash, d.format from documents d"
        " join users u on u.id = d.owner_id"
        " where d.status = 'ready' and d.tables_version is distinct from %s"
        " order by d.owner_id, d.created_at, d.id", (TABLES_VERSION,)).fetchall()]


def chunk_lines(conn: psycopg.Connection, *, document_id: uuid.UUID) -> list[tuple[int, int, str]]:
    """(ord, page, text) of a document's child chunks: what links a row to its chunk."""
    return conn.execute("select ord, page, text from child_chunks where document_id = %s order by ord",
                        (document_id,)).fetchall()


def glossary_words(conn: psycopg.Connection, text: str) -> str:
    """The filing words the query glossary (sql/003_query_glossary.sql) adds for `text`'s analyst words
    ("capital expenditure" -> "purchases of property plant equipment ..."); "" when none match."""
    rows = conn.execute("select expansion from query_glossary where %s ~* pattern order by pattern",
                        (text,)).fetchall()
    return " ".join(row[0] for row in rows)
