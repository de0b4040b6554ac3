"""The embedding model's identity is recorded with the chunks; another model is refused (server start,
ingestion) until `reindex` has re-embedded everything, owner by owner and resumably, even into
another dimension. Real models: the packaged MiniLM, and MiniLM with a 384->128 projection on top
(a different model with another dimension, built by the test with sentence-transformers)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from evals import pdfs
from ingestion.pipeline import run_job, submit_document
from ingestion.reindex import reindex
from providers.embeddings import build_embedder
from runtime import build_runtime
from storage import embedding_index
from storage.db import Database, open_database
from storage.search import SearchParams, search
from storage.users import get_or_create_user
from tests.support import documents


@pytest.fixture
def fresh(db, settings) -> Iterator[tuple[Database, object]]:
    """A database of its own in the same embedded server (the model switch must not touch the others')."""
    name = f"reindex_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(db.uri, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    own = settings.model_copy(update={"database_url": db.uri.replace("/postgres?", f"/{name}?")})
    database = open_database(own)
    yield database, own
    database.close()


def ingest(database: Database, settings, embedder, owner: int, name: str, data: bytes):
    sub = submit_document(database, settings, owner_id=owner, name=name, data=data)
    return sub, run_job(database, settings, embedder, sub.job_id)


def top_document(database: Database, embedder, owner: int, query: str):
    with database.connection() as conn:
        hits = search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                      params=SearchParams(k=1, mode="dense"))
    return hits[0].document_name if hits else None


def released(database: Database, within_s: float = 60.0) -> None:
    """Waits until no backend holds the model lock: a closed connection's backend lets its session lock go as it
    exits, a moment after the client closed it (on a busy machine the swap asked at once found it still held)."""
    deadline = time.monotonic() + within_s
    with database.connection() as conn:
        while conn.execute("select count(*) from pg_locks where locktype = 'advisory' and objid = %s and database ="
                           " (select oid from pg_database where datname = current_database())",
                           (embedding_index.MODEL_LOCK,)).fetchone()[0]:
            assert time.monotonic() < deadline, "the model lock was never released"
            time.sleep(0.05)


def test_another_model_is_refused_until_reindex(fresh, embedder, model_128, monkeypatch) -> None:
    database, settings = fresh
    small = build_embedder("torch", model_128)  # a Dense projection: PyTorch runs it
    assert (embedder.identity, small.identity) == ("all-MiniLM-L6-v2:384:onnx-int8", "minilm-128:128:torch")
    with database.connection() as conn:
        ann = get_or_create_user(conn, "ann")
        bob = get_or_create_user(conn, "bob")
    ingest(database, settings, embedder, ann, "dividends.pdf",
           pdfs.long_report(["Quarterly dividend policy", "Share buyback programme"]))
    ingest(database, settings, embedder, bob, "handbook.docx", documents.docx_bytes())
    with database.connection() as conn:
        embedding_index.check_model(conn, embedder.identity, embedder.dimension)  # the recorded model
        with pytest.raises(embedding_index.ModelMismatch,
                           match=r"all-MiniLM-L6-v2:384:onnx-int8 .* minilm-128:128:torch.*thotqen reindex"):
            embedding_index.check_model(conn, small.identity, small.dimension)

    # a process still running with the other model cannot store its vectors
    sub, outcome = ingest(database, settings, small, ann, "notes.md", documents.MARKDOWN.encode())
    assert outcome.status == "failed" and "must be restarted" in outcome.error

    # an interrupted reindex keeps what it staged and leaves the old vectors serving
    real_stage = embedding_index.stage_vectors
    calls: list[int] = []

    def stop_after_first(conn, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real_stage(conn, **kwargs)

    monkeypatch.setattr(embedding_index, "stage_vectors", stop_after_first)
    with pytest.raises(KeyboardInterrupt):
        reindex(database, small)
    monkeypatch.setattr(embedding_index, "stage_vectors", real_stage)
    assert top_document(database, embedder, ann, "share buyback programme") == "dividends.pdf"

    owners: list[str] = []
    outcome = reindex(database, small, lambda owner, *_: owners.append(owner) if owner not in owners else None)
    assert outcome.documents == 1 and not outcome.already  # only what the first run had not staged
    assert owners == ["bob"]
    with database.connection() as conn:
        assert embedding_index.column_dimension(conn) == 128
        now = embedding_index.state(conn)
        assert (now.model, now.dimension, now.chunks) == ("minilm-128:128:torch", 128, outcome.swapped)
        models = conn.execute("select distinct embedding_model from documents where children > 0").fetchall()
        assert models == [("minilm-128:128:torch",)]
        embedding_index.check_model(conn, small.identity, small.dimension)
        with pytest.raises(embedding_index.ModelMismatch):
            embedding_index.check_model(conn, embedder.identity, embedder.dimension)
    assert top_document(database, small, ann, "share buyback programme") == "dividends.pdf"
    assert top_document(database, small, bob, "receipts for travel expenses") == "handbook.docx"
    assert reindex(database, small).already

    # a running server (the shared model lock) blocks the swap back; nothing is lost meanwhile
    lock = embedding_index.hold(database.uri)
    try:
        with pytest.raises(embedding_index.IndexBusy, match="stop it"):
            reindex(database, embedder)
    finally:
        lock.close()
    released(database)
    back = reindex(database, embedder)
    assert back.documents == 0 and back.swapped == outcome.swapped  # everything was staged already
    assert top_document(database, embedder, bob, "receipts for travel expenses") == "handbook.docx"


def test_the_server_refuses_to_start_with_another_model(fresh, embedder, model_128) -> None:
    from fastapi.testclient import TestClient

    from server import create_app

    database, settings = fresh
    with database.connection() as conn:
        owner = get_or_create_user(conn, "carol")
    ingest(database, settings, embedder, owner, "minutes.txt", b"The board approved a dividend of 18 cents.")
    other = settings.model_copy(update={"embedding_model_path": model_128, "embedding_backend": "torch"})
    app = create_app(runtime=build_runtime(other, database=database), start_worker=False)
    with pytest.raises(embedding_index.ModelMismatch, match="thotqen reindex"), TestClient(app):
        pass
    recorded = build_runtime(settings, database=database, embedder=embedder)
    with TestClient(create_app(runtime=recorded, start_worker=False)) as client:  # the recorded model starts
        assert client.get("/api/health").status_code == 200


def test_an_empty_index_takes_any_model(fresh, model_128) -> None:
    database, _settings = fresh
    small = build_embedder("torch", model_128)
    with database.connection() as conn:
        embedding_index.check_model(conn, small.identity, small.dimension)
        assert embedding_index.column_dimension(conn) == 128
        assert embedding_index.state(conn).model == "minilm-128:128:torch"


def test_identity_names_the_model_folder(tmp_path: Path, embedder) -> None:
    from providers.embeddings import model_name, packaged_model_path

    link = tmp_path / "minilm-link"
    link.symlink_to(packaged_model_path())
    assert model_name(None) == model_name(packaged_model_path()) == model_name(str(link)) == "all-MiniLM-L6-v2"
    assert model_name(str(tmp_path / "finetuned-minilm")) == "finetuned-minilm"
