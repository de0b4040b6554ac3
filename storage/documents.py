"""Documents and their chunks. Every read is scoped by owner in SQL."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from lexicon import YEAR_DIGITS
from storage import audit, parse_uuid
from storage.rows import one, scalar
from storage.tenancy import OWNERS, member_read, owners_only
from storage.workspaces import Owners, owner_ids


@dataclass(frozen=True)
class ParentRow:
    ord: int
    page_start: int
    page_end: int
    text: str


@dataclass(frozen=True)
class ChildRow:
    parent_ord: int
    ord: int
    page: int
    heading: str
    text: str
    page_label: str | None = None  # what a citation names; None: "page N"
    ocr: bool = False
    boxes: list[list[float]] | None = None  # line boxes on a PDF page, in points


@dataclass(frozen=True)
class PageRow:
    """One page-like unit of a document (a PDF page, a slide, a sheet block, a section)."""

    page: int
    label: str
    title: str
    ocr: bool
    text: str


DOCUMENT_COLUMNS = (
    "d.id, d.name, d.content_hash, d.size_bytes, d.status, d.pages, d.error, d.created_at, d.updated_at,"
    " d.format, d.ocr_pages, d.embedding_model, d.company, d.form, d.period, d.period_end,"
    " d.former_names, d.file_number, d.tickers, d.context_set_by_owner,"
    " (select count(*) from parent_chunks p where p.document_id = d.id) as parents,"
    " d.children,"  # stored by replace_chunks in the same transaction as the chunks
    # where it is (its owner: a user, or a workspace) and who uploaded it (sql/029_workspaces.sql)
    " d.owner_id, (select w.name from workspaces w where w.id = d.owner_id) as workspace,"
    " (select u.username from users u where u.id = coalesce(d.uploaded_by, d.owner_id)) as uploaded_by"
)
# The columns above that say where a document is: the CLI shows them only for a workspace's documents.
PLACE_COLUMNS = ("owner_id", "workspace", "uploaded_by")


def lock_content(conn: psycopg.Connection, *, owner_id: int, content_hash: str) -> None:
    """Serialise submissions of the same file by the same owner until the caller's transaction ends."""
    conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))",
                 (f"thotqen:content:{owner_id}:{content_hash}",))


@owners_only
def find_by_hash(conn: psycopg.Connection, *, owner_id: int, content_hash: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select {DOCUMENT_COLUMNS} from documents d where d.owner_id = %s and d.content_hash = %s",
            (owner_id, content_hash),
        ).fetchone()


@owners_only
def create_document(
    conn: psycopg.Connection, *, owner_id: int, name: str, content_hash: str, size_bytes: int, fmt: str = "pdf",
    uploaded_by: int | None = None,
) -> uuid.UUID:
    """A new document of `owner_id` (a user, or a workspace: then `uploaded_by` is the member)."""
    return scalar(conn.execute(
        "insert into documents (owner_id, name, content_hash, size_bytes, format, uploaded_by)"
        " values (%s, %s, %s, %s, %s, %s) returning id",
        (owner_id, name, content_hash, size_bytes, fmt, uploaded_by if uploaded_by is not None else owner_id),
    ), uuid.UUID)


@owners_only
def get_page(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str,
             page: int) -> dict[str, Any] | None:
    """One unit of the owner's document with its text; None for a stranger's or a missing one."""
    doc_uuid = parse_uuid(document_id)
    if doc_uuid is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select p.page, p.label, p.title, p.ocr, p.text, d.format from document_pages p"
            " join documents d on d.id = p.document_id"
            " where d.owner_id = any(%s::bigint[]) and p.owner_id = d.owner_id and p.document_id = %s and p.page = %s",
            (owner_ids(owner_id), doc_uuid, page),
        ).fetchone()


@owners_only
def recognised_chunks(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str,
                      page: int) -> list[tuple[str, list[list[float]]]]:
    """(text, line boxes in points) of each child chunk on an OCR'd page of the owner's document: the
    page image has no text to find a passage in, so a citation is highlighted with these boxes."""
    doc_uuid = parse_uuid(document_id)
    if doc_uuid is None:
        return []
    return [(text, boxes) for text, boxes in conn.execute(
        "select text, boxes from child_chunks where owner_id = any(%s::bigint[]) and document_id = %s and page = %s"
        " and ocr"
        " and boxes is not null order by ord", (owner_ids(owner_id), doc_uuid, page)).fetchall()]


@owners_only
def get_document(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str) -> dict[str, Any] | None:
    """The document if `owner_id` owns it; None otherwise (a stranger's id looks absent)."""
    doc_uuid = parse_uuid(document_id)
    if doc_uuid is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select {DOCUMENT_COLUMNS} from documents d where d.owner_id = any(%s::bigint[]) and d.id = %s",
            (owner_ids(owner_id), doc_uuid),
        ).fetchone()


@owners_only
def list_documents(conn: psycopg.Connection, *, owner_id: Owners, limit: int | None = None,
                   offset: int = 0) -> list[dict[str, Any]]:
    """The owner's documents, the oldest first (`limit` None: all, for the operator's CLI and evals)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select {DOCUMENT_COLUMNS} from documents d where d.owner_id = any(%s::bigint[])"
            " order by d.created_at, d.name, d.id"
            " limit %s offset %s",
            (owner_ids(owner_id), limit, offset),
        ).fetchall()


def readable_documents(conn: psycopg.Connection, *, user_id: int, workspace_id: int | None, limit: int,
                       offset: int = 0) -> tuple[list[int], list[dict[str, Any]]]:
    """(the owners `user_id` reads now: theirs and their workspaces', or `workspace_id`'s only, empty
    when not a member of it; a page of their documents, the oldest first): the membership check, the
    tenancy and the page in one round trip (storage/tenancy.py member_read), as list_documents orders."""
    return member_read(
        conn, user_id, workspace_id,
        f"select {DOCUMENT_COLUMNS} from documents d where d.owner_id = any({OWNERS})"
        " order by d.created_at, d.name, d.id limit %s offset %s",
        (limit, offset),
    )


@owners_only
def delete_document(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str,
                    actor_id: int | None = None) -> bool:
    """Delete the document (its chunks, jobs and cells cascade); `actor_id`: the person who asked,
    recorded in a workspace's audit log in the same transaction."""
    doc_uuid = parse_uuid(document_id)
    if doc_uuid is None:
        return False
    with conn.transaction():
        row = conn.execute("delete from documents where owner_id = any(%s::bigint[]) and id = %s"
                           " returning owner_id, name", (owner_ids(owner_id), doc_uuid)).fetchone()
        if row is not None:
            audit.deleted(conn, owner_id=int(row[0]), actor_id=actor_id, action="document_deleted", name=str(row[1]))
    return row is not None


def set_document_status(
    conn: psycopg.Connection,
    *,
    document_id: uuid.UUID,
    status: str,
    error: str | None = None,
    pages: int | None = None,
) -> None:
    conn.execute(
        "update documents set status = %s, error = %s, pages = coalesce(%s, pages), updated_at = now()"
        " where id = %s",
        (status, error, pages, document_id),
    )


def set_document_context(conn: psycopg.Connection, *, document_id: uuid.UUID, company: str, form: str,
                         period: str, period_end: date | None, former_names: Sequence[str] = (),
                         file_number: str = "", tickers: Sequence[str] = (), incorporated: str = "") -> None:
    """What the document says it is (ingestion/context.py); empty values are stored as NULL. What
    its owner set by hand (set_owner_context) is kept: company, form and period are not read over."""
    conn.execute(
        "update documents set company = case when context_set_by_owner then company else %s end,"
        " form = case when context_set_by_owner then form else %s end,"
        " period = case when context_set_by_owner then period else %s end,"
        " period_end = case when context_set_by_owner then period_end else %s end,"
        " former_names = %s, file_number = %s, tickers = %s, incorporated = %s where id = %s",
        (company or None, form or None, period or None, period_end, list(former_names), file_number or None,
         list(tickers), incorporated or None, document_id),
    )


def set_owner_context(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str,
                      company: str | None = None, form: str | None = None, period: str | None = None,
                      period_end: date | None = None) -> bool:
    """The owner says what the document is (a value left None is kept; "" clears it; the values
    as storage.question_period.owner_period and document_filter.normal_form write them); False
    when `owner_id` has no such document (a stranger's id answers as a missing one)."""
    doc_uuid = parse_uuid(document_id)
    if doc_uuid is None:
        return False
    sets: list[str] = ["context_set_by_owner = true", "updated_at = now()"]
    args: list[object] = []
    for column, value in (("company", company), ("form", form), ("period", period)):
        if value is not None:
            sets.append(f"{column} = %s")
            args.append(value.strip() or None)
    if period is not None:
        sets.append("period_end = %s")
        args.append(period_end)
    cur = conn.execute(f"update documents set {', '.join(sets)} where owner_id = any(%s::bigint[]) and id = %s",
                       (*args, owner_ids(owner_id), doc_uuid))
    return cur.rowcount == 1


def issuer_identities(conn: psycopg.Connection, *, owner_id: Owners,
                      document_ids: Sequence[uuid.UUID] | None = None) -> list[tuple[Any, ...]]:
    """(id, company, former_names, file_number, tickers, form, period, period_end) of the owner's
    documents (among `document_ids` when given), oldest first."""
    clauses = "owner_id = any(%(owner)s::bigint[])"
    args = {"owner": owner_ids(owner_id), "docs": list(document_ids or [])}
    if document_ids is not None:
        clauses += " and id = any(%(docs)s)"
    return conn.execute(
        "select id, coalesce(company, ''), former_names, coalesce(file_number, ''), tickers, coalesce(form, ''),"
        f" coalesce(period, ''), period_end from documents where {clauses} order by created_at, id", args).fetchall()


def requeue_document(conn: psycopg.Connection, *, document_id: uuid.UUID, name: str) -> None:
    """A document that failed (or lost its job) is queued again under its newest upload name."""
    conn.execute(
        "update documents set status = 'queued', error = null, name = %s, updated_at = now() where id = %s",
        (name, document_id),
    )


def ready_documents(conn: psycopg.Connection, *, owner_id: Owners) -> dict[str, uuid.UUID]:
    """{name: id} of the owner's ready documents, in name order."""
    return dict(conn.execute(
        "select name, id from documents where owner_id = any(%s::bigint[]) and status = 'ready' order by name",
        (owner_ids(owner_id),)
    ).fetchall())


def chunk_texts(conn: psycopg.Connection, *, owner_id: int, document_id: uuid.UUID) -> list[str]:
    """The texts the embedder saw for each child chunk of a document (heading, newline, text)."""
    rows = conn.execute(
        "select heading, text from child_chunks where owner_id = %s and document_id = %s order by ord",
        (owner_id, document_id),
    ).fetchall()
    return [f"{heading}\n{text}" for heading, text in rows]


def long_parent_chunks(
    conn: psycopg.Connection, *, owner_id: int, document_id: uuid.UUID, min_chars: int
) -> list[tuple[int, int, int, str]]:
    """(id, page_start, page_end, text) of a document's parent chunks of at least `min_chars`, in order."""
    return conn.execute(
        "select id, page_start, page_end, text from parent_chunks where document_id = %s and owner_id = %s"
        " and length(text) >= %s order by ord",
        (document_id, owner_id, min_chars),
    ).fetchall()


def refresh_term_index(conn: psycopg.Connection) -> None:
    """Vacuum and analyze the sparse side's postings after a write, so the planner knows the new
    filing's terms. Needs an autocommit connection (VACUUM cannot run in a transaction)."""
    conn.execute("vacuum (analyze) term_stats")


def replace_chunks(
    conn: psycopg.Connection,
    *,
    owner_id: int,
    document_id: uuid.UUID,
    parents: list[ParentRow],
    children: list[ChildRow],
    embeddings: np.ndarray,
    model: str,
    pages: Sequence[PageRow],
) -> None:
    """Write all chunks of a document, made by embedding `model`; call inside the caller's
    transaction (all or nothing)."""
    conn.execute("delete from parent_chunks where document_id = %s", (document_id,))
    conn.execute("delete from document_pages where document_id = %s", (document_id,))
    parent_ids: dict[int, int] = {}
    with conn.cursor() as cur:
        cur.executemany(
            "insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)"
            " values (%s, %s, %s, %s, %s, %s) returning id, ord",
            [(document_id, owner_id, p.ord, p.page_start, p.page_end, p.text) for p in parents],
            returning=True,
        )
        while True:
            pid, ord_ = one(cur)
            parent_ids[ord_] = pid
            if not cur.nextset():
                break
    with conn.cursor() as cur, cur.copy(
        "copy child_chunks (parent_id, document_id, owner_id, ord, page, heading, text, embedding,"
        " page_label, ocr, boxes) from stdin with (format binary)"
    ) as copy:
        copy.set_types(["int8", "uuid", "int8", "int4", "int4", "text", "text", "vector", "text", "bool", "jsonb"])
        for child, vec in zip(children, embeddings, strict=True):
            copy.write_row(
                (parent_ids[child.parent_ord], document_id, owner_id, child.ord, child.page,
                 child.heading, child.text, vec, child.page_label, child.ocr,
                 Jsonb(child.boxes) if child.boxes else None)
            )
    with conn.cursor() as cur, cur.copy(
        "copy document_pages (document_id, owner_id, page, label, title, ocr, text) from stdin"
    ) as copy:
        for unit in pages:
            copy.write_row((document_id, owner_id, unit.page, unit.label, unit.title, unit.ocr,
                            unit.text.replace("\x00", " ")))
    # Per-filing lexeme counts (the IDF) and postings for the sparse side (sql/011_term_postings.sql).
    conn.execute("select refresh_term_postings(%s)", (document_id,))
    conn.execute(
        "update documents set children = %s, embedding_model = %s, ocr_pages = %s where id = %s",
        (len(children), model, sum(1 for u in pages if u.ocr), document_id),
    )


@dataclass(frozen=True)
class StoredDocument:
    owner_id: int
    username: str
    document_id: uuid.UUID
    name: str
    children: int


def ready_documents_of_all(conn: psycopg.Connection) -> list[StoredDocument]:
    """Every ready document, owner by owner (for `thotqen reindex --context`, an operator's command)."""
    return [StoredDocument(*row) for row in conn.execute(
        "select d.owner_id, u.username, d.id, d.name, d.children from documents d join users u on u.id = d.owner_id"
        " where d.status = 'ready' order by d.owner_id, d.created_at, d.id").fetchall()]


def stored_units(conn: psycopg.Connection, *, document_id: uuid.UUID) -> list[tuple[int, str, str]]:
    """(page, title, text) of a document's stored units, in order: what its context is read from again."""
    return conn.execute("select page, title, text from document_pages where document_id = %s order by page",
                        (document_id,)).fetchall()


def child_headings(conn: psycopg.Connection, *, document_id: uuid.UUID) -> list[tuple[int, str, str]]:
    """(child id, heading, text) of a document's chunks, in order."""
    return conn.execute("select id, heading, text from child_chunks where document_id = %s order by ord",
                        (document_id,)).fetchall()


def replace_headings(conn: psycopg.Connection, *, document_id: uuid.UUID, child_ids: Sequence[int],
                     headings: Sequence[str], embeddings: np.ndarray) -> None:
    """New headings and their vectors for some of a document's chunks; the trigger re-weights their
    full text and the document's sparse postings are rebuilt. Call inside the caller's transaction."""
    with conn.cursor() as cur:
        cur.executemany("update child_chunks set heading = %s, embedding = %s where id = %s and document_id = %s",
                        [(h, v, i, document_id) for i, h, v in zip(child_ids, headings, embeddings, strict=True)])
    conn.execute("select refresh_term_postings(%s)", (document_id,))


def company_names(conn: psycopg.Connection, *, owner_id: Owners, document_ids: Sequence[uuid.UUID]) -> list[str]:
    """The company each of the owner's documents names on its cover (read at ingestion), where read."""
    rows = conn.execute("select distinct company from documents where owner_id = any(%s::bigint[]) and id = any(%s)"
                        " and coalesce(company, '') <> ''", (owner_ids(owner_id), list(document_ids))).fetchall()
    return [row[0] for row in rows]


@dataclass(frozen=True)
class Filers:
    """Who filed a set of the owner's documents: every name and ticker their covers give."""

    names: list[str]  # current and former company names, tickers
    unknown: bool  # a document among them whose company was not read


def filers(conn: psycopg.Connection, *, owner_id: Owners, document_ids: Sequence[uuid.UUID]) -> Filers:
    rows = conn.execute("select coalesce(company, ''), former_names, tickers from documents"
                        " where owner_id = any(%s::bigint[]) and id = any(%s)",
                        (owner_ids(owner_id), list(document_ids))).fetchall()
    names = sorted({n for company, former, tickers in rows for n in (company, *former, *tickers) if n})
    return Filers(names=names, unknown=any(not company for company, _f, _t in rows))


@dataclass(frozen=True)
class Coverage:
    """What a set of the owner's documents speaks of: the years they report, and their names."""

    years: set[int]  # each document's own period year and every fiscal year its tables report
    names: list[str]  # file names and cover companies
    # the documents with no period of their own (not periodic reports): the years they write are of what they tell
    unperiodic: list[uuid.UUID] = field(default_factory=list)


def coverage(conn: psycopg.Connection, *, owner_id: Owners, document_ids: Sequence[uuid.UUID] | None) -> Coverage:
    """The years and names of the owner's ready documents (`document_ids` of them, or all)."""
    docs = conn.execute(
        "select d.id, d.name, coalesce(d.company, ''), coalesce(d.period, ''), d.period_end from documents d"
        " where d.owner_id = any(%s::bigint[]) and d.status = 'ready' and (%s::uuid[] is null or d.id = any(%s))",
        (owner_ids(owner_id), list(document_ids) if document_ids else None,
         list(document_ids) if document_ids else None),
    ).fetchall()
    ids = [row[0] for row in docs]
    years = {int(y) for row in docs for y in YEAR_DIGITS.findall(f"{row[3]} {row[4] or ''}")}
    years |= {row[0] for row in conn.execute(
        "select distinct fiscal_year from table_cells where owner_id = any(%s::bigint[]) and document_id = any(%s)"
        " and fiscal_year is not null", (owner_ids(owner_id), ids)).fetchall()}
    return Coverage(years=years, names=[n for row in docs for n in (row[1], row[2]) if n],
                    unperiodic=[row[0] for row in docs if not row[3] and row[4] is None])


def mentions(conn: psycopg.Connection, *, owner_id: Owners, document_ids: Sequence[uuid.UUID] | None,
             phrase: str) -> bool:
    """Whether any of the owner's ready documents (`document_ids` of them, or all) holds every word of
    `phrase` in one passage, in any order (full text, stemmed as the sparse search stems): a question's
    "Fullerton Cessna" is the report's "a Cessna ... near Fullerton"."""
    row = conn.execute(
        "select exists(select 1 from child_chunks c join documents d on d.id = c.document_id"
        " where d.owner_id = any(%s::bigint[]) and d.status = 'ready' and (%s::uuid[] is null or d.id = any(%s))"
        " and c.tsv @@ plainto_tsquery('english', %s))",
        (owner_ids(owner_id), list(document_ids) if document_ids else None,
         list(document_ids) if document_ids else None,
         phrase)).fetchone()
    return bool(row and row[0])


def absent_words(conn: psycopg.Connection, *, owner_id: Owners, document_id: uuid.UUID | str,
                 words: Sequence[str]) -> set[str]:
    """The `words` the owner's document never uses (full text, stemmed as the sparse search stems);
    a stop word ("did") is never absent: it is not indexed at all."""
    if not words:
        return set()
    rows = conn.execute(
        "select w from unnest(%s::text[]) w where numnode(plainto_tsquery('english', w)) > 0"
        " and not exists(select 1 from child_chunks c join documents d on d.id = c.document_id"
        " where d.owner_id = any(%s::bigint[]) and d.id = %s and c.tsv @@ plainto_tsquery('english', w))",
        (list(words), owner_ids(owner_id), parse_uuid(document_id))).fetchall()
    return {r[0] for r in rows}
