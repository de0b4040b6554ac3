"""Uploads of every format, told by content; page-like units readable by id; citations that name the
unit; OCR as a stage of the job's progress; Office bombs and disguised binaries refused at once."""

from __future__ import annotations

import io
import zipfile

import pytest

from evals import pdfs
from tests.server.conftest import ask, follow_job, signup, upload
from tests.support import documents

REVENUE_DOC = [("Title", "Aurora Widgets annual summary"), ("Heading 1", "Markets"),
               ("Normal", "Demand for turbines grew in the north."), ("Heading 1", "Revenue"),
               ("Normal", "Aurora Widgets reported total revenue of 412 million euros in fiscal 2023.")]


@pytest.fixture
def user(live):
    with live.client() as c:
        return signup(c, "formats")


def test_a_word_file_under_a_pdf_name_is_read_as_word_and_cited_by_section(live, user) -> None:
    h = user["headers"]
    with live.client() as c:
        res = upload(c, h, "summary.pdf", documents.docx_bytes(REVENUE_DOC))
        assert res.status_code == 202, res.text
        events = follow_job(c, h, res.json()["job_id"])
        assert events[-1][0] == "done"
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=h).json()
        assert doc["format"] == "docx" and doc["pages"] == 3 and doc["ocr_pages"] == 0
        unit = c.get(f"/api/documents/{doc['id']}/pages/3", headers=h).json()
        assert unit["label"] == "section 2" and unit["title"] == "Revenue" and "412 million" in unit["text"]
        assert unit["format"] == "docx" and unit["ocr"] is False
        assert c.get(f"/api/documents/{doc['id']}/pages/9", headers=h).status_code == 404
        image = c.get(f"/api/documents/{doc['id']}/pages/3.png", headers=h)  # no page image for a section
        assert image.status_code == 404 and "/pages/3 gives the unit's text" in image.json()["detail"]
        original = c.get(f"/api/documents/{doc['id']}/file", headers=h)
        assert original.status_code == 200 and original.headers["content-type"].startswith(
            "application/vnd.openxmlformats-officedocument.wordprocessingml")
        stranger = signup(c, "stranger")["headers"]
        assert c.get(f"/api/documents/{doc['id']}/pages/3", headers=stranger).status_code == 404

        chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        events = ask(c, h, chat, "What was Aurora Widgets' total revenue in fiscal 2023?")
        sources = next(data for event, data in events if event == "sources")["sources"]
        cited = [s for s in sources if "412 million" in s["text"]]
        assert cited and cited[0]["page_label"] == "section 2" and cited[0]["page"] == 3
        assert cited[0]["name"] == "summary.pdf" and cited[0]["ocr"] is False


def test_a_scan_reports_ocr_as_a_stage_and_is_marked(live, user) -> None:
    h = user["headers"]
    scan = pdfs.rasterised(pdfs.text_pdf(["Aurora Widgets employed 5,300 people at the end of fiscal 2023."]))
    with live.client() as c:
        res = upload(c, h, "scan.pdf", scan)
        assert res.status_code == 202, res.text
        events = follow_job(c, h, res.json()["job_id"])
        assert events[-1][0] == "done", events[-1]
        stages = [data["stage"] for event, data in events if event == "progress"]
        # polled every 0.2 s, a stage as short as embedding two chunks may pass unseen; OCR takes seconds
        assert "ocr" in stages and "parsing" not in stages[stages.index("ocr"):]
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=h).json()
        assert doc["ocr_pages"] == 1
        unit = c.get(f"/api/documents/{doc['id']}/pages/1", headers=h).json()
        assert unit["ocr"] is True and unit["label"] == "page 1" and "5,300 people" in unit["text"]
        image = c.get(f"/api/documents/{doc['id']}/pages/1.png", headers=h)  # the unit route leaves this alone
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"


def _foreign_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("photos/cat.jpg", b"\xff\xd8\xff" + bytes(100))
    return out.getvalue()


@pytest.mark.parametrize(("name", "data", "status", "words"), [
    ("report.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(3000), 415, "legacy binary Office"),
    ("cat.docx", _foreign_zip(), 415, "not a Word, PowerPoint or Excel"),
    ("program.txt", b"\x7fELF\x02\x01\x01\x00" + bytes(3000), 415, "not a supported format"),
    ("bomb.xlsx", documents.zip_bomb("xlsx", 300), 422, "zip bomb"),
])
def test_disguised_binaries_and_bombs_are_refused_at_once(live, user, name, data, status, words) -> None:
    with live.client() as c:
        res = upload(c, user["headers"], name, data)
        assert res.status_code == status, res.text
        assert words in res.json()["detail"]
        assert c.get("/api/documents", headers=user["headers"]).json()["documents"] == []


def test_a_damaged_word_file_fails_its_job_with_the_reason(live, user) -> None:
    h = user["headers"]
    with live.client() as c:
        res = upload(c, h, "broken.docx", documents.corrupt(documents.docx_bytes(documents.HANDBOOK * 40)))
        assert res.status_code == 202, res.text
        events = follow_job(c, h, res.json()["job_id"])
        assert events[-1][0] == "failed" and "Word file is damaged" in events[-1][1]["error"]
        doc = c.get(f"/api/documents/{res.json()['document_id']}", headers=h).json()
        assert doc["status"] == "failed" and doc["chunks"] == 0
        assert c.get(f"/api/documents/{doc['id']}/pages/1", headers=h).status_code == 404
