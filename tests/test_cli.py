"""The CLI contract, run as a real subprocess against the embedded Postgres."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evals import pdfs


def thotqen(*args: str, home: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "THOTQEN_HOME": str(home), **env_extra}
    env.pop("DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[1], timeout=300)


@pytest.fixture(scope="module")
def cli_home(tmp_path_factory) -> Path:
    # Its own short data directory: this Postgres is started and stopped by the CLI processes.
    import tempfile

    return Path(tempfile.mkdtemp(prefix="thq-cli-", dir="/tmp"))


def test_ingest_search_documents(cli_home: Path, tmp_path: Path) -> None:
    good = tmp_path / "Quarterly_Report.pdf"
    good.write_bytes(pdfs.long_report(["Hurricane damage to warehouses", "Quarterly dividend policy"]))
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))  # an image with a PDF name
    res = thotqen("ingest", str(good), str(bad), str(tmp_path / "missing.pdf"), home=cli_home)
    assert res.returncode == 1, res.stderr
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert [line["name"] for line in lines] == ["Quarterly_Report.pdf", "notes.pdf", "missing.pdf"]
    ok, not_pdf, missing = lines
    assert ok["status"] == "ready" and ok["pages"] == 4 and ok["children"] > 0 and ok["parents"] > 0
    assert set(ok) >= {"name", "document_id", "pages", "parents", "children", "seconds", "status"}
    assert not_pdf["status"] == "failed" and "not a supported format" in not_pdf["error"]
    assert missing["status"] == "failed" and "no such file" in missing["error"]

    again = thotqen("ingest", str(good), home=cli_home)
    assert again.returncode == 0
    assert json.loads(again.stdout)["status"] == "reused"

    res = thotqen("search", "dividend policy", "--json", "--k", "3", home=cli_home)
    assert res.returncode == 0, res.stderr
    hits = json.loads(res.stdout)["hits"]
    assert 0 < len(hits) <= 3
    assert set(hits[0]) == {"document_id", "name", "page", "page_label", "ocr", "text", "score", "dense_rank",
                            "sparse_rank", "heading_rank"}
    assert hits[0]["page"] in (3, 4) and hits[0]["document_id"] == ok["document_id"]

    res = thotqen("search", "dividend policy", "--json", "--mode", "sparse", "--document", ok["document_id"],
                  home=cli_home)
    assert all(h["dense_rank"] is None for h in json.loads(res.stdout)["hits"])

    # another user sees nothing, even naming the document
    res = thotqen("search", "dividend policy", "--json", "--user", "mallory", "--document", ok["document_id"],
                  home=cli_home)
    assert json.loads(res.stdout)["hits"] == []

    res = thotqen("documents", "--json", home=cli_home)
    docs = json.loads(res.stdout)["documents"]
    assert [d["name"] for d in docs] == ["Quarterly_Report.pdf"] and docs[0]["status"] == "ready"
    # a report with no cover page says no company, form or period; a filter on them then matches nothing
    assert {k: docs[0][k] for k in ("company", "form", "period", "period_end")} == dict.fromkeys(
        ("company", "form", "period", "period_end"))
    res = thotqen("search", "dividend policy", "--json", "--form", "10-K", "--period", "FY2022", home=cli_home)
    assert res.returncode == 0 and json.loads(res.stdout)["hits"] == []

    res = thotqen("search", "x", "--document", "not-a-uuid", home=cli_home)
    assert res.returncode == 2 and "not a document id" in res.stderr


def test_collections_scope_search_as_they_are_now(cli_home: Path, tmp_path: Path) -> None:
    good = tmp_path / "Quarterly_Report.pdf"
    good.write_bytes(pdfs.long_report(["Hurricane damage to warehouses", "Quarterly dividend policy"]))
    doc = json.loads(thotqen("ingest", str(good), home=cli_home).stdout)["document_id"]  # reused when there

    res = thotqen("collection", "create", "2023 filings", "--json", home=cli_home)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["documents"] == []
    assert thotqen("collection", "create", "2023 filings", home=cli_home).returncode == 2  # the name is taken
    res = thotqen("search", "dividend policy", "--collection", "2023 filings", home=cli_home)
    assert res.returncode == 2 and "has no documents" in res.stderr

    res = thotqen("collection", "add", "2023 filings", doc, home=cli_home)
    assert res.returncode == 0 and "1 document(s)" in res.stdout, res.stderr
    res = thotqen("search", "dividend policy", "--json", "--collection", "2023 filings", home=cli_home)
    assert res.returncode == 0 and {h["document_id"] for h in json.loads(res.stdout)["hits"]} == {doc}
    listed = thotqen("collection", "list", home=cli_home).stdout
    assert "2023 filings" in listed and "1 documents" in listed

    # another user has no such collection, and cannot add the document to one of theirs
    res = thotqen("search", "dividend policy", "--collection", "2023 filings", "--user", "mallory", home=cli_home)
    assert res.returncode == 2 and "no collection named" in res.stderr
    thotqen("collection", "create", "theirs", "--user", "mallory", home=cli_home)
    res = thotqen("collection", "add", "theirs", doc, "--user", "mallory", home=cli_home)
    assert res.returncode == 2 and "no such document" in res.stderr
    res = thotqen("ask", "x", "--collection", "2023 filings", "--document", doc, home=cli_home)
    assert res.returncode == 2 and "not both" in res.stderr
    assert thotqen("collection", "delete", "2023 filings", home=cli_home).returncode == 0


def test_doctor_reports_mode_and_checks(cli_home: Path) -> None:
    res = thotqen("doctor", home=cli_home)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "mode: embedded Postgres" in res.stdout
    for check in ("database", "pgvector", "schema", "row security", "embedding model", "embedding index"):
        assert f"[  ok] {check}:" in res.stdout


def test_doctor_names_the_fix_and_hides_the_password(cli_home: Path) -> None:
    env_home = cli_home
    res = subprocess.run(
        [sys.executable, "-m", "cli", "doctor"], capture_output=True, text=True, timeout=120,
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "THOTQEN_HOME": str(env_home),
             "DATABASE_URL": "postgresql://app:hunter2secret@127.0.0.1:1/nothing"},
    )
    assert res.returncode == 1
    assert "hunter2secret" not in res.stdout + res.stderr
    assert "app:****@" in res.stdout
    assert "[FAIL] database" in res.stdout and "fix: check DATABASE_URL" in res.stdout


def test_another_model_is_refused_until_reindex(cli_home: Path, model_128: str) -> None:
    """The filing ingested above holds MiniLM vectors: a 128-d model is refused with the fix, reindex
    re-embeds owner by owner with a progress bar, then the new model searches and the old is refused."""
    # the 128-d model has a Dense projection: PyTorch runs it (the ONNX backends take mean-pooled models)
    other = {"EMBEDDING_MODEL_PATH": model_128, "EMBEDDING_BACKEND": "torch"}
    res = thotqen("search", "dividend policy", home=cli_home, **other)
    assert res.returncode == 3
    assert "all-MiniLM-L6-v2:384:onnx-int8" in res.stderr and "thotqen reindex" in res.stderr
    res = thotqen("doctor", home=cli_home, **other)
    assert res.returncode == 1 and "[FAIL] embedding index" in res.stdout and "thotqen reindex" in res.stdout
    res = thotqen("reindex", home=cli_home, **other)
    assert res.returncode == 0, res.stderr
    done = json.loads(res.stdout)
    assert done["model"] == "minilm-128:128:torch" and done["chunks"] == done["index_chunks"] > 0
    assert "owner local" in res.stderr and "chunk" in res.stderr  # the progress bar
    res = thotqen("search", "dividend policy", "--json", home=cli_home, **other)
    assert res.returncode == 0 and json.loads(res.stdout)["hits"][0]["page"] in (3, 4)
    assert thotqen("search", "dividend policy", home=cli_home).returncode == 3


def test_ingest_is_under_the_same_storage_quota_as_uploads(tmp_path: Path) -> None:
    """Issue 41: `thotqen ingest` stores through the upload's path, so DOCUMENTS_PER_USER and
    STORAGE_MB_PER_USER bound it alike: a file past either fails with the reason, nothing kept."""
    import tempfile

    # a home of its own: the module's may hold another embedding model's index (the reindex test's)
    cli_home = Path(tempfile.mkdtemp(prefix="thq-quota-", dir="/tmp"))
    files = []
    for n in range(2):
        path = tmp_path / f"note-{n}.txt"
        path.write_text(f"Note {n}: the warehouse in Tulsa reopened after the storm.\n")
        files.append(str(path))
    user = f"quota-{os.getpid()}-{tmp_path.name[-6:]}"
    res = thotqen("ingest", *files, "--user", user, home=cli_home, DOCUMENTS_PER_USER="1")
    assert res.returncode == 1, res.stderr
    first, second = (json.loads(line) for line in res.stdout.splitlines())
    assert first["status"] == "ready"
    assert second["status"] == "failed" and "DOCUMENTS_PER_USER" in second["error"] and second["document_id"] is None
    listed = thotqen("documents", "--json", "--user", user, home=cli_home)
    assert listed.returncode == 0, listed.stderr
    assert [d["name"] for d in json.loads(listed.stdout)["documents"]] == ["note-0.txt"]
