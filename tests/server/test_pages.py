"""The cited page as an image: owner-scoped, cached (ETag, Cache-Control), the passage highlighted;
and the original file to download."""

from __future__ import annotations

import pymupdf

from tests.server.conftest import signup

AMBER = (255, 199, 0)


def amber_pixels(png: bytes) -> int:
    """Pixels the highlight tints: a strong yellow-orange (the page is otherwise black on white)."""
    pix = pymupdf.Pixmap(png)
    data, n = pix.samples, pix.n
    return sum(1 for i in range(0, len(data), n) if data[i] > 200 and 150 < data[i + 1] < 235 and data[i + 2] < 140)


def test_page_image_highlights_the_cited_passage(live, owner_with_report) -> None:
    h = owner_with_report["headers"]
    doc = owner_with_report["document_id"]
    with live.client() as c:
        answer = c.post("/rag/invoke", headers=h, json={"input": {"question": "How many people did Aurora Widgets "
                                                                               "employ at the end of fiscal 2023?"}})
        citation = answer.json()["output"]["citations"][0]
        url = f"/api/documents/{doc}/pages/{citation['page']}.png"
        res = c.get(url, params={"highlight": citation["text"], "width": 600}, headers=h)
        assert res.status_code == 200 and res.headers["content-type"] == "image/png", res.text
        assert int(res.headers["x-highlighted-lines"]) >= 3
        top, left, bottom, right = map(float, res.headers["x-highlight-box"].split(","))
        assert 0 <= top < bottom <= 1 and 0 <= left < right <= 1
        assert res.headers["cache-control"].startswith("private") and res.headers["etag"]
        marked = amber_pixels(res.content)
        plain = c.get(url, params={"width": 600}, headers=h)
        assert plain.headers["x-highlighted-lines"] == "0" and amber_pixels(plain.content) == 0
        assert marked > 2000, marked  # several highlighted lines at 600 px
        assert pymupdf.Pixmap(res.content).width == 600
        # the browser revalidates with the ETag and gets 304 without a body
        again = c.get(url, params={"highlight": citation["text"], "width": 600},
                      headers={**h, "If-None-Match": res.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        # another passage is another image
        other = c.get(url, params={"highlight": "nothing like this is on the page at all", "width": 600}, headers=h)
        assert other.headers["etag"] != res.headers["etag"] and other.headers["x-highlighted-lines"] == "0"


def test_page_image_and_file_are_owner_scoped(live, owner_with_report, report_pdf) -> None:
    doc = owner_with_report["document_id"]
    with live.client() as c:
        stranger = signup(c, "stranger")
        for path in (f"/api/documents/{doc}/pages/1.png", f"/api/documents/{doc}/file"):
            mine = c.get(path, headers=owner_with_report["headers"])
            assert mine.status_code == 200, path
            theirs = c.get(path, headers=stranger["headers"])
            missing = c.get(path.replace(doc, "00000000-0000-0000-0000-000000000000"), headers=stranger["headers"])
            assert theirs.status_code == missing.status_code == 404
            assert theirs.json() == missing.json()
            assert c.get(path).status_code == 401
        pdf = c.get(f"/api/documents/{doc}/file", headers=owner_with_report["headers"])
        assert pdf.content == report_pdf and pdf.headers["content-type"] == "application/pdf"
        assert 'filename="aurora-report.pdf"' in pdf.headers["content-disposition"]


def test_bad_page_requests_are_clear_errors(live, owner_with_report) -> None:
    h = owner_with_report["headers"]
    doc = owner_with_report["document_id"]
    with live.client() as c:
        assert c.get(f"/api/documents/{doc}/pages/99.png", headers=h).status_code == 404
        assert c.get(f"/api/documents/{doc}/pages/0.png", headers=h).status_code == 404
        assert c.get(f"/api/documents/{doc}/pages/one.png", headers=h).status_code == 422
        assert c.get(f"/api/documents/{doc}/pages/1.png", params={"width": 5}, headers=h).status_code == 422
        too_long = {"highlight": "x" * 5000}
        assert c.get(f"/api/documents/{doc}/pages/1.png", params=too_long, headers=h).status_code == 422
        assert c.get("/api/documents/not-a-uuid/pages/1.png", headers=h).status_code == 404


def test_deleting_the_document_removes_its_pages(live, report_pdf) -> None:
    from tests.server.conftest import follow_job, upload

    with live.client() as c:
        user = signup(c, "deleter")
        res = upload(c, user["headers"], "gone.pdf", report_pdf)
        follow_job(c, user["headers"], res.json()["job_id"])
        doc = res.json()["document_id"]
        assert c.get(f"/api/documents/{doc}/pages/1.png", headers=user["headers"]).status_code == 200
        assert c.delete(f"/api/documents/{doc}", headers=user["headers"]).status_code == 204
        assert c.get(f"/api/documents/{doc}/pages/1.png", headers=user["headers"]).status_code == 404
        assert c.get(f"/api/documents/{doc}/file", headers=user["headers"]).status_code == 404


def test_behind_nginx_the_routes_answer_only_the_redirect(start_server, server_settings, report_pdf) -> None:
    """ACCEL_REDIRECT_PREFIX set: empty answers naming the file and the render kept in the file store
    (tests/server/test_edge.py puts nginx in front); a stranger's answer stays the missing id's 404."""
    from tests.server.conftest import follow_job, upload

    accel = start_server(server_settings.model_copy(update={"accel_redirect_prefix": "/_protected/"}))
    files = server_settings.home / "files"
    with accel.client() as c:
        user, stranger = signup(c, "accel"), signup(c, "accel-stranger")
        h = user["headers"]
        res = upload(c, h, "aurora-report.pdf", report_pdf)
        follow_job(c, h, res.json()["job_id"])
        doc = res.json()["document_id"]
        original = c.get(f"/api/documents/{doc}/file", headers=h)
        assert original.status_code == 200 and original.content == b""
        assert original.headers["content-type"] == "application/pdf"
        assert original.headers["content-disposition"] == 'attachment; filename="aurora-report.pdf"'
        assert (files / original.headers["x-accel-redirect"].removeprefix("/_protected/")).read_bytes() == report_pdf
        page = c.get(f"/api/documents/{doc}/pages/2.png", params={"width": 400}, headers=h)
        assert page.status_code == 200 and page.content == b"" and page.headers["content-type"] == "image/png"
        kept = files / page.headers["x-accel-redirect"].removeprefix("/_protected/")
        assert pymupdf.Pixmap(kept.read_bytes()).width == 400 and page.headers["x-highlighted-lines"] == "0"
        for path in (f"/api/documents/{doc}/file", f"/api/documents/{doc}/pages/2.png"):
            theirs = c.get(path, headers=stranger["headers"])
            missing = c.get(path.replace(doc, "00000000-0000-0000-0000-000000000000"), headers=stranger["headers"])
            assert theirs.status_code == missing.status_code == 404 and theirs.json() == missing.json()
            assert "x-accel-redirect" not in theirs.headers
        assert c.get(f"/api/documents/{doc}/pages/99.png", headers=h).status_code == 404
        assert c.delete(f"/api/documents/{doc}", headers=h).status_code == 204
        assert not kept.exists()  # the kept renders go with the file


def test_a_document_without_pages_has_no_page_image_but_its_file(live) -> None:
    from tests.server.conftest import follow_job, upload

    text = b"# Notes\n\nAurora Widgets reported total revenue of 412 million dollars in fiscal 2023.\n"
    with live.client() as c:
        user = signup(c, "notes")
        res = upload(c, user["headers"], "notes.md", text, "text/markdown")
        assert res.status_code == 202, res.text
        follow_job(c, user["headers"], res.json()["job_id"])
        doc = res.json()["document_id"]
        page = c.get(f"/api/documents/{doc}/pages/1.png", headers=user["headers"])
        assert page.status_code == 404 and "no page images" in page.json()["detail"]
        original = c.get(f"/api/documents/{doc}/file", headers=user["headers"])
        assert original.status_code == 200 and original.content == text
        assert original.headers["content-type"].startswith("text/markdown")


STAFF_PAGE = ("Aurora Widgets annual report for fiscal 2023.\n"
              "Aurora Widgets employed 5,300 people at the end of fiscal 2023, up from 4,900 a year earlier.\n"
              "Most of them work in the plants at Tampere and Oulu; about 600 work in sales offices abroad.")


def _cited_highlight(c, name: str, data: bytes) -> tuple[dict, list[float], int]:
    """A new user uploads `data`, asks about it and opens the cited page: (citation, highlight box, lines)."""
    from tests.server.conftest import follow_job, upload

    user = signup(c, "cite")
    h = user["headers"]
    res = upload(c, h, name, data)
    assert res.status_code == 202, res.text
    assert follow_job(c, h, res.json()["job_id"])[-1][0] == "done"
    answer = c.post("/rag/invoke", headers=h, json={"input": {"question": "How many people did Aurora Widgets "
                                                                           "employ at the end of fiscal 2023?"}})
    citation = answer.json()["output"]["citations"][0]
    assert citation["page"] == 1 and "5,300" in citation["text"], citation
    image = c.get(f"/api/documents/{res.json()['document_id']}/pages/1.png",
                  params={"highlight": citation["text"], "width": 600}, headers=h)
    assert image.status_code == 200, image.text
    assert amber_pixels(image.content) > 1000
    box = [float(v) for v in image.headers["x-highlight-box"].split(",")]
    return citation, box, int(image.headers["x-highlighted-lines"])


def test_an_ocr_page_highlights_the_cited_passage_like_its_text_layer(live) -> None:
    """The same page as typed text and as a scan: the scan's citation is OCR'd text with line boxes,
    and its page image marks the same stretch of the page the text layer's does."""
    from evals.pdfs import rasterised, text_pdf

    typed = text_pdf([STAFF_PAGE])
    with live.client() as c:
        text_citation, text_box, text_lines = _cited_highlight(c, "staff.pdf", typed)
        ocr_citation, ocr_box, ocr_lines = _cited_highlight(c, "staff-scan.pdf", rasterised(typed))
    assert text_citation["ocr"] is False and ocr_citation["ocr"] is True and ocr_citation["boxes"]
    assert text_lines >= 3 and ocr_lines >= 3
    # top, left, bottom, right as fractions of the page: recognised line boxes sit within a few points
    # of the text layer's
    assert all(abs(a - b) < 0.02 for a, b in zip(text_box, ocr_box, strict=True)), (text_box, ocr_box)
