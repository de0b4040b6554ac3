"""What a document says it is, over HTTP: shown by GET /api/documents (list and one), and usable at
/rag as company / form / period filters that narrow the caller's own documents only."""

from __future__ import annotations

import pytest

from evals import pdfs
from graph import prompts
from tests.server.conftest import follow_job, signup, upload
from tests.unit.test_context import COVER_10K

QUESTION = "What was Northwind Traders' total revenue?"
BODY = "Northwind Traders reported total revenue of 412 million dollars in fiscal 2022. " * 6


@pytest.fixture(scope="module")
def owner(live):
    with live.client() as c:
        user = signup(c, "ctx")
        res = upload(c, user["headers"], "download (3).pdf", pdfs.text_pdf([COVER_10K, BODY]))
        assert res.status_code == 202, res.text
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
        return {**user, "document_id": res.json()["document_id"]}


def test_documents_show_what_they_say_they_are(live, owner) -> None:
    said = {"company": "Northwind Traders, Inc.", "form": "10-K", "period": "FY2022", "period_end": "2022-12-31"}
    with live.client() as c:
        one = c.get(f"/api/documents/{owner['document_id']}", headers=owner["headers"]).json()
        listed = c.get("/api/documents", headers=owner["headers"]).json()["documents"]
    assert {k: one[k] for k in said} == said
    assert [{k: d[k] for k in said} for d in listed] == [said]


def rag(c, headers: dict, **filters: str) -> dict:
    res = c.post("/rag/invoke", headers=headers, json={"input": {"question": QUESTION, **filters},
                                                       "config": {"configurable": {"hyde": False}}})
    assert res.status_code == 200, res.text
    return res.json()["output"]


def test_rag_filters_narrow_the_callers_documents(live, owner) -> None:
    with live.client() as c:
        found = rag(c, owner["headers"], company="northwind", form="10k", period="fiscal 2022")
        assert {x["document_id"] for x in found["citations"]} == {owner["document_id"]}
        for filters in ({"company": "contoso"}, {"form": "10-Q"}, {"period": "Q2 2023"}):
            out = rag(c, owner["headers"], **filters)
            assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == [], filters
        stranger = signup(c, "stranger")["headers"]
        out = rag(c, stranger, company="northwind", form="10-K")
        assert out["citations"] == []
        too_long = c.post("/rag/invoke", headers=owner["headers"],
                          json={"input": {"question": QUESTION, "company": "x" * 201}})
        assert too_long.status_code == 422 and "company" in too_long.text
