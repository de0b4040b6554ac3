"""Every format ingested and searched end to end (real Postgres, real embedder); OCR'd pages marked in
the chunks and hits; bad files end `failed` with a reason and leave nothing behind."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from evals import pdfs
from ingestion.pipeline import run_job, submit_document
from storage import documents as docs_store
from storage.search import SearchParams, search
from tests.support import documents


def ingest_file(db, settings, embedder, owner: int, name: str, data: bytes, progress=None):
    sub = submit_document(db, settings, owner_id=owner, name=name, data=data)
    return sub, run_job(db, settings, embedder, sub.job_id, progress)


def top_hit(db, embedder, owner: int, query: str, document_id=None):
    with db.connection() as conn:
        hits = search(conn, owner_id=owner, query_text=query, query_embedding=embedder.embed_query(query),
                      params=SearchParams(k=3), document_ids=[document_id] if document_id else None)
    return hits[0]


def stored(db, document_id) -> tuple[int, int]:
    with db.connection() as conn:
        return conn.execute(
            "select (select count(*) from child_chunks where document_id = %s),"
            " (select count(*) from document_pages where document_id = %s)", (document_id, document_id)).fetchone()


def test_each_format_is_ingested_and_cited_by_its_unit(db, settings, embedder, make_user) -> None:
    _, owner = make_user("formats")
    files = {
        "handbook.docx": (documents.docx_bytes(), "receipt scanned within thirty days", "section 2"),
        "strategy.pptx": (documents.pptx_bytes([("Strategy 2024", ["Grow exports to Brazil"]),
                                                ("Hiring", ["Hire 40 firmware engineers in Porto"])]),
                          "firmware engineers Porto", "slide 2"),
        "sales.xlsx": (documents.xlsx_bytes({"Revenue": [["Region", "Q1"], ["North", 1200]],
                                             "Headcount": [["Team", "People"], ["Marine sonar lab", 31]]}),
                       "marine sonar lab people", "sheet Headcount"),
        "note.html": (documents.HOSTILE_HTML.format(url="http://127.0.0.1:9").encode(), "turbines sold quarter",
                      "section 1"),
        "release.md": (documents.MARKDOWN.encode(), "importer drops last row of a sheet", "section 2.1"),
        "minutes.txt": (b"Board minutes\n\nThe board approved a dividend of 18 cents per share.\n", "dividend cents",
                        "lines 1-3"),
    }
    for name, (data, query, label) in files.items():
        sub, outcome = ingest_file(db, settings, embedder, owner, name, data)
        assert outcome.status == "ready", (name, outcome.error)
        hit = top_hit(db, embedder, owner, query, sub.document_id)
        assert (hit.document_name, hit.page_label, hit.ocr) == (name, label, False)
        with db.connection() as conn:
            doc = docs_store.get_document(conn, owner_id=owner, document_id=sub.document_id)
            unit = docs_store.get_page(conn, owner_id=owner, document_id=sub.document_id, page=hit.page)
        assert doc["format"] == sub.format and doc["embedding_model"] == embedder.identity
        assert unit["label"] == label and hit.child_text.split("\n")[0] in unit["text"]
    # across all six, the question lands on the right file and unit
    hit = top_hit(db, embedder, owner, "How many people work in the marine sonar lab?")
    assert (hit.document_name, hit.page_label) == ("sales.xlsx", "sheet Headcount")
    with db.connection() as conn:  # a stranger asking for the unit gets nothing
        _, stranger = make_user("stranger")
        assert docs_store.get_page(conn, owner_id=stranger, document_id=sub.document_id, page=1) is None


def test_ocr_pages_are_marked_with_boxes_and_ocr_is_a_stage(db, settings, embedder, make_user) -> None:
    _, owner = make_user("ocr")
    original = pdfs.text_pdf(["Aurora Widgets shipped 7,450 hydrogen turbines to Norway in fiscal 2023.",
                              "The second page keeps its text layer and talks about the pension plan."])
    seen: list[tuple[str, float]] = []
    sub, outcome = ingest_file(db, settings, embedder, owner, "scan.pdf", pdfs.rasterised(original, {1}),
                               progress=lambda stage, percent: seen.append((stage, percent)))
    assert outcome.status == "ready", outcome.error
    stages = list(dict.fromkeys(stage for stage, _ in seen))
    assert stages == ["parsing", "ocr", "chunking", "embedding", "storing", "done"]
    assert [p for _, p in seen] == sorted(p for _, p in seen)  # percent only goes up
    hit = top_hit(db, embedder, owner, "hydrogen turbines shipped to Norway")
    assert (hit.page, hit.page_label, hit.ocr) == (1, "page 1", True) and "7,450" in hit.child_text
    x0, y0, x1, y1 = hit.boxes[0]
    assert 60 < x0 < 90 and 60 < y0 < 90 and x1 > x0 + 200
    other = top_hit(db, embedder, owner, "pension plan")
    assert (other.page, other.ocr) == (2, False)
    with db.connection() as conn:
        doc = docs_store.get_document(conn, owner_id=owner, document_id=sub.document_id)
    assert doc["ocr_pages"] == 1


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # the stdlib's name
        _Recorder.requests.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_html_with_scripts_and_remote_images_fetches_and_runs_nothing(db, settings, embedder, make_user,
                                                                      recorder) -> None:
    _, owner = make_user("html")
    page = documents.HOSTILE_HTML.format(url=recorder).encode()
    sub, outcome = ingest_file(db, settings, embedder, owner, "note.html", page)
    assert outcome.status == "ready"
    assert _Recorder.requests == []  # no script, image, stylesheet, frame or object was fetched
    with db.connection() as conn:
        text = " ".join(t for (t,) in conn.execute("select text from child_chunks where document_id = %s",
                                                   (sub.document_id,)).fetchall())
    assert "7,450 turbines" in text and "INJECTED" not in text and "fetch" not in text


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("broken.docx", documents.corrupt(documents.docx_bytes(documents.HANDBOOK * 40)), "Word file is damaged"),
    ("broken.xlsx", documents.corrupt(documents.big_sheet(2000)), "Excel file is damaged"),
    ("empty.pptx", documents.pptx_bytes([]), "no text"),
])
def test_damaged_office_files_fail_with_a_reason_and_keep_nothing(db, settings, embedder, make_user,
                                                                  name, data, reason) -> None:
    _, owner = make_user("bad")
    sub, outcome = ingest_file(db, settings, embedder, owner, name, data)
    assert outcome.status == "failed" and reason in outcome.error
    assert stored(db, sub.document_id) == (0, 0)
    with db.connection() as conn:
        doc = docs_store.get_document(conn, owner_id=owner, document_id=sub.document_id)
    assert doc["status"] == "failed" and doc["error"] == outcome.error


def test_a_parse_past_its_deadline_fails_and_keeps_nothing(db, settings, embedder, make_user,
                                                           monkeypatch) -> None:
    _, owner = make_user("slow")
    monkeypatch.setattr(settings.ingestion, "timeout_s", 0.2)
    sub, outcome = ingest_file(db, settings, embedder, owner, "scan.pdf", pdfs.rasterised(pdfs.table_page()))
    assert outcome.status == "failed" and "longer than 0.2 s (INGEST_TIMEOUT_S)" in outcome.error
    assert stored(db, sub.document_id) == (0, 0)


@pytest.mark.slow
def test_a_ten_thousand_row_sheet_is_ingested(db, settings, embedder, make_user) -> None:
    _, owner = make_user("sheet")
    sub, outcome = ingest_file(db, settings, embedder, owner, "orders.xlsx", documents.big_sheet(10_000))
    assert outcome.status == "ready" and outcome.pages == 100
    hit = top_hit(db, embedder, owner, "SO-09950", sub.document_id)
    assert hit.page_label == "sheet Orders, rows 9901-10000"
