"""GET /api/formats reports the registry (a format registered in-process shows up at once), and the
upload, file and page routes follow it; the web app reads the list instead of keeping its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from api.routes.web import WEB_DIR
from ingestion.formats import registry
from tests.server.conftest import follow_job, signup, upload
from tests.unit.test_format_registry import MAGIC, THROWAWAY


@pytest.fixture
def throwaway() -> Iterator[None]:
    registry.register(THROWAWAY, before="html")
    try:
        yield
    finally:
        registry.unregister(THROWAWAY.name)


def test_the_endpoint_reports_the_built_in_formats_publicly(live, server_settings) -> None:
    with live.client() as c:
        res = c.get("/api/formats")  # no session: the sign-in page may ask too
        schema = c.get("/openapi.json").json()
    assert res.status_code == 200, res.text
    body = res.json()
    assert [f["name"] for f in body["formats"]] == ["pdf", "docx", "pptx", "xlsx", "html", "markdown", "text"]
    assert body["accepted"] == registry.accepted()
    assert body["accept"].split(",") == [s for f in registry.formats() for s in f.suffixes]
    assert body["upload_max_mb"] == server_settings.bodies.upload_max_mb
    xlsx = next(f for f in body["formats"] if f["name"] == "xlsx")
    assert xlsx["unit"] == "sheet" and xlsx["label"] == "Excel" and xlsx["page_images"] is False
    assert xlsx["limits"] == {"OFFICE_MAX_UNPACKED_MB": server_settings.ingestion.office_max_unpacked_mb,
                              "SHEET_MAX_ROWS": server_settings.ingestion.sheet_max_rows}
    op = schema["paths"]["/api/formats"]["get"]
    assert "security" not in op
    shape = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert shape == {"$ref": "#/components/schemas/FormatsOut"}


def test_a_registered_format_is_reported_uploaded_and_served_with_its_type(live, throwaway) -> None:
    with live.client() as c:
        listed = c.get("/api/formats").json()
        assert "throwaway" in [f["name"] for f in listed["formats"]]
        assert ".thr,.throw" in listed["accept"] and "Throwaway (.thr)" in listed["accepted"]
        h = signup(c, "registry")["headers"]
        res = upload(c, h, "ledger.thr", MAGIC + b"forty-two widgets", "application/octet-stream")
        assert res.status_code == 202, res.text  # sniffed by its rule, streamed past the early refusal
        document_id = res.json()["document_id"]
        # the parsing sandbox is a fresh process that knows only the registry's own list: the job fails
        # there with a reason, and the stored original is still served as its format
        assert follow_job(c, h, res.json()["job_id"])[-1][0] == "failed"
        doc = c.get(f"/api/documents/{document_id}", headers=h).json()
        assert doc["format"] == "throwaway"
        original = c.get(f"/api/documents/{document_id}/file", headers=h)
        assert original.status_code == 200 and original.headers["content-type"] == "application/x-throwaway"
        assert original.content == MAGIC + b"forty-two widgets"
        image = c.get(f"/api/documents/{document_id}/pages/1.png", headers=h)
        assert image.status_code == 404 and "has no page images" in image.json()["detail"]


def test_the_web_app_keeps_no_list_of_its_own() -> None:
    script = (WEB_DIR / "js" / "documents.js").read_text()
    assert "/api/formats" in script
    for fact in (".docx", ".pptx", ".markdown", "PowerPoint"):
        assert fact not in script, fact
