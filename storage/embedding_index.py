"""Which embedding model's vectors the index holds, and the swap to another model (`thotqen reindex`).

The identity of the model that made the stored vectors (name:dimension:backend) is recorded in
`embedding_index` and on each document. A process that embeds with another model is refused
(`check_model`) until `thotqen reindex` has staged a vector of the new model for every chunk
(`stage_vectors`, document by document, so an interrupted run resumes) and swapped them all in
with one transaction (`swap`). Search therefore never compares vectors of two models, and neither
does the semantic answer cache (emptied at every switch). Processes that embed hold a shared
advisory lock for their lifetime (`hold`); the swap needs it exclusively, so it never changes the
vectors under a running server.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

from storage.rows import one, scalar

log = logging.getLogger(__name__)

MODEL_LOCK = 7_160_002  # advisory lock key: shared by processes embedding queries/chunks, exclusive for a swap
CHECK_LOCK = 7_160_003  # one model check at a time (two first starts must not both record a model)
HNSW_INDEX = (
    "create index if not exists child_chunks_embedding_idx on child_chunks"
    " using hnsw (embedding vector_cosine_ops) with (m = 16, ef_construction = 64)"
)


class ModelMismatch(RuntimeError):
    """The stored vectors come from another embedding model; the message says what to do."""


class IndexBusy(RuntimeError):
    """Another process holds the model lock (a running server or ingestion)."""


@dataclass(frozen=True)
class IndexState:
    model: str | None  # None: nothing recorded yet
    dimension: int | None
    documents: int  # documents holding vectors
    chunks: int


def state(conn: psycopg.Connection) -> IndexState:
    row = conn.execute("select model, dimension from embedding_index").fetchone()
    documents, chunks = one(conn.execute(
        "select count(*), coalesce(sum(children), 0) from documents where children > 0"
    ))
    return IndexState(row[0] if row else None, row[1] if row else None, int(documents), int(chunks))


def column_dimension(conn: psycopg.Connection) -> int:
    """The dimension child_chunks.embedding is declared with (pgvector keeps it as the type modifier)."""
    return scalar(conn.execute(
        "select atttypmod from pg_attribute where attrelid = 'child_chunks'::regclass and attname = 'embedding'"
    ), int)


def _resize_columns(conn: psycopg.Connection, dimension: int) -> None:
    """Declare the vector columns with `dimension`; their values are dropped (refilled by the caller)."""
    conn.execute("drop index if exists child_chunks_embedding_idx")
    conn.execute("alter table child_chunks alter column embedding drop not null,"
                 f" alter column embedding type vector({int(dimension)}) using null")
    conn.execute("delete from answer_cache")
    conn.execute(f"alter table answer_cache alter column embedding type vector({int(dimension)}) using null")


def _record(conn: psycopg.Connection, model: str, dimension: int) -> None:
    conn.execute(
        "insert into embedding_index (singleton, model, dimension) values (true, %s, %s)"
        " on conflict (singleton) do update set model = excluded.model, dimension = excluded.dimension,"
        " updated_at = now()",
        (model, dimension),
    )


def mismatch_message(recorded: str, documents: int, chunks: int, identity: str) -> str:
    return (
        f"the index holds vectors of the embedding model {recorded} ({documents} documents, {chunks} chunks), "
        f"but this process embeds with {identity}. Run `thotqen reindex` to re-embed everything with {identity}, "
        "or set EMBEDDING_MODEL_PATH back to the model that made them"
    )


def check_model(conn: psycopg.Connection, identity: str, dimension: int) -> None:
    """Accept `identity` when the index holds its vectors or none at all (then it is recorded, and the
    vector columns take its dimension); raise ModelMismatch when the stored vectors are another model's."""
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (CHECK_LOCK,))
        now = state(conn)
        others = [m for (m,) in conn.execute(
            "select distinct embedding_model from documents where children > 0 and embedding_model is not null"
            " and embedding_model <> %s", (identity,)).fetchall()]
        if now.model == identity and not others:
            return
        if now.chunks == 0:
            busy = not scalar(conn.execute("select pg_try_advisory_xact_lock(%s)", (MODEL_LOCK,)), bool)
            if now.model is not None and busy:  # a running process embeds questions with the recorded model
                raise ModelMismatch(f"a Thotqen process embedding with {now.model} is running on this database; "
                                    f"stop it before starting with {identity}")
            if column_dimension(conn) != dimension:
                _resize_columns(conn, dimension)
                conn.execute(HNSW_INDEX)
            else:
                conn.execute("delete from answer_cache")  # questions embedded by the previous model
            _record(conn, identity, dimension)
            log.info("embedding index: recorded %s (no vectors stored yet)", identity)
            return
        if now.model is None and not others and column_dimension(conn) == dimension:
            # Vectors stored before identities were recorded (sql/009): only the configured model made them.
            _record(conn, identity, dimension)
            conn.execute("update documents set embedding_model = %s where children > 0 and embedding_model is null",
                         (identity,))
            log.warning("embedding index: adopted %s for %d documents stored before models were recorded",
                        identity, now.documents)
            return
        recorded = now.model if now.model and now.model != identity else (others[0] if others else "unknown")
        raise ModelMismatch(mismatch_message(recorded, now.documents, now.chunks, identity))


def assert_model(conn: psycopg.Connection, identity: str, dimension: int) -> None:
    """Inside a transaction that stores vectors: they must be the recorded model's (a process started
    before a switch may still be running). The first vectors ever stored record their model."""
    conn.execute("insert into embedding_index (singleton, model, dimension) values (true, %s, %s)"
                 " on conflict (singleton) do nothing", (identity, dimension))
    (model,) = one(conn.execute("select model from embedding_index for share"))
    if model != identity:
        raise ModelMismatch(f"the index now holds vectors of {model}; this process embeds with {identity} "
                            "and must be restarted")


class _Unheld:
    def close(self) -> None:
        pass


def hold(uri: str, *, pooled: bool = False) -> psycopg.Connection | _Unheld:
    """A connection holding the shared model lock until it is closed: no swap while this process runs.

    Behind a transaction pooler a session lock would stay on whichever server connection ran it, held
    for no one: nothing is held then, and a swap must wait until servers and workers are stopped."""
    if pooled:
        log.warning("behind a transaction pooler the model lock is not held: stop servers and workers "
                    "before `thotqen reindex` swaps the embedding model")
        return _Unheld()
    conn = psycopg.connect(uri, autocommit=True)
    conn.execute("select pg_advisory_lock_shared(%s)", (MODEL_LOCK,))  # session-scoped on purpose: see above
    return conn


# ---------------------------------------------------------------- re-embedding


@dataclass(frozen=True)
class PendingDocument:
    owner_id: int
    username: str
    document_id: uuid.UUID
    name: str
    children: int


def pending(conn: psycopg.Connection, model: str) -> list[PendingDocument]:
    """Documents whose chunks lack a staged vector of `model`, owner by owner. Staged vectors of any
    other model (an earlier reindex towards something else) are discarded first."""
    conn.execute("delete from reindex_vectors where model <> %s", (model,))
    rows = conn.execute(
        "select d.owner_id, u.username, d.id, d.name, d.children from documents d join users u on u.id = d.owner_id"
        " where d.children > 0 and coalesce(d.embedding_model, '') <> %s"
        "   and d.children > (select count(*) from reindex_vectors r where r.document_id = d.id)"
        " order by d.owner_id, d.created_at, d.name",
        (model,),
    ).fetchall()
    return [PendingDocument(*row) for row in rows]


def chunk_texts(conn: psycopg.Connection, document_id: uuid.UUID) -> list[tuple[int, str, str]]:
    """(child id, heading, text) of a document's chunks, in order."""
    return conn.execute(
        "select id, heading, text from child_chunks where document_id = %s order by ord", (document_id,)
    ).fetchall()


def stage_vectors(conn: psycopg.Connection, *, document_id: uuid.UUID, owner_id: int, model: str,
                  child_ids: Sequence[int], vectors: np.ndarray) -> None:
    """Stage one document's vectors of `model`, all or none."""
    with conn.transaction():
        conn.execute("delete from reindex_vectors where document_id = %s", (document_id,))
        with conn.cursor() as cur, cur.copy(
            "copy reindex_vectors (child_id, document_id, owner_id, model, embedding) from stdin with (format binary)"
        ) as copy:
            copy.set_types(["int8", "uuid", "int8", "text", "vector"])
            for child_id, vec in zip(child_ids, vectors, strict=True):
                copy.write_row((child_id, document_id, owner_id, model, vec))


def swap(conn: psycopg.Connection, model: str, dimension: int) -> int:
    """Put the staged vectors of `model` in place of every chunk's, in one transaction; returns the
    number of chunks. Raises IndexBusy while a server or ingestion holds the model lock, and
    RuntimeError when a chunk has no staged vector (a document added meanwhile: stage it first)."""
    with conn.transaction():
        if not scalar(conn.execute("select pg_try_advisory_xact_lock(%s)", (MODEL_LOCK,)), bool):
            raise IndexBusy("a Thotqen server or ingestion is running on this database; stop it, then run "
                            "`thotqen reindex` again to finish (the re-embedded vectors are kept)")
        missing = scalar(conn.execute(
            "select count(*) from child_chunks c where not exists"
            " (select 1 from reindex_vectors r where r.child_id = c.id and r.model = %s)", (model,)
        ), int)
        if missing:
            raise RuntimeError(f"{missing} chunks have no vector of {model} yet")
        conn.execute("drop index if exists child_chunks_embedding_idx")
        if column_dimension(conn) != dimension:
            _resize_columns(conn, dimension)
        else:
            conn.execute("delete from answer_cache")
        cur = conn.execute(
            f"update child_chunks c set embedding = r.embedding::vector({int(dimension)})"
            " from reindex_vectors r where r.child_id = c.id",
        )
        swapped = cur.rowcount
        conn.execute("alter table child_chunks alter column embedding set not null")
        conn.execute(HNSW_INDEX)
        conn.execute("update documents set embedding_model = %s where children > 0", (model,))
        _record(conn, model, dimension)
        conn.execute("delete from reindex_vectors")
    conn.execute("vacuum (analyze) child_chunks")
    return swapped
