"""Collections and the sidebar's search over real HTTP: a collection groups documents, a chat over
it answers from the documents it holds when each question is asked (one added later is searched
from then on), /v1 asks one as the model `thotqen:NAME`, and search finds documents by name and
chats by an old answer's words, owner-scoped. The authorization matrix (test_authz_matrix.py)
walks every route here with a stranger's ids."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import STANDALONE, ask, follow_job, signup, upload


def ingest(c: Any, headers: dict[str, str], name: str, data: bytes) -> str:
    res = upload(c, headers, name, data)
    assert res.status_code == 202, res.text
    assert follow_job(c, headers, res.json()["job_id"])[-1][0] == "done"
    return str(res.json()["document_id"])


def other_pdf() -> bytes:
    from evals.pdfs import text_pdf

    return text_pdf(["Borealis Freight opened a new depot in Gdansk in 2022; it handles rail freight. " * 10])


def test_a_collection_chat_answers_from_the_documents_it_holds_at_each_question(live, report_pdf) -> None:
    with live.client() as c:
        user = signup(c, "collector")
        h = user["headers"]
        aurora = ingest(c, h, "aurora-report.pdf", report_pdf)
        borealis = ingest(c, h, "borealis.pdf", other_pdf())
        made = c.post("/api/collections", headers=h, json={"name": "2023 filings", "document_ids": [borealis]})
        assert made.status_code == 201, made.text
        coll = made.json()
        assert coll["document_count"] == 1 and [d["name"] for d in coll["documents"]] == ["borealis.pdf"]
        assert c.post("/api/collections", headers=h, json={"name": "2023 filings"}).status_code == 409
        chat = c.post("/api/chats", headers=h, json={"collection_id": coll["id"]}).json()
        assert chat["collection_id"] == coll["id"] and chat["collection_name"] == "2023 filings"
        assert chat["document_ids"] is None

        before = ask(c, h, chat["id"], STANDALONE)[-1][1]
        assert "5,300" not in before["answer"]
        assert all(s.get("document_id") != aurora for s in before.get("citations") or [])

        added = c.post(f"/api/collections/{coll['id']}/documents", headers=h, json={"document_ids": [aurora, aurora]})
        assert added.status_code == 200 and added.json()["document_count"] == 2
        after = ask(c, h, chat["id"], STANDALONE)[-1][1]
        assert "5,300" in after["answer"], after
        assert {s["document_id"] for s in after["citations"]} == {aurora}

        # listed, renamed, a document taken out, both scopes at once refused
        listed = c.get("/api/collections", headers=h).json()
        assert [x["name"] for x in listed["collections"]] == ["2023 filings"] and listed["next_offset"] is None
        assert c.get("/api/collections?limt=1", headers=h).status_code == 422
        renamed = c.patch(f"/api/collections/{coll['id']}", headers=h, json={"name": "Filings 2023"})
        assert renamed.json()["name"] == "Filings 2023"
        assert c.get(f"/api/chats/{chat['id']}", headers=h).json()["collection_name"] == "Filings 2023"
        assert c.delete(f"/api/collections/{coll['id']}/documents/{borealis}", headers=h).status_code == 204
        assert c.delete(f"/api/collections/{coll['id']}/documents/{borealis}", headers=h).status_code == 404
        assert [d["id"] for d in c.get(f"/api/collections/{coll['id']}", headers=h).json()["documents"]] == [aurora]
        both = c.post("/api/chats", headers=h, json={"collection_id": coll["id"], "document_ids": [aurora]})
        assert both.status_code == 422

        # deleted: its documents stay, and the chat keeps the documents it had (never all of them)
        assert c.delete(f"/api/collections/{coll['id']}", headers=h).status_code == 204
        kept = c.get(f"/api/chats/{chat['id']}", headers=h).json()
        assert kept["collection_id"] is None and kept["document_ids"] == [aurora]
        assert c.get(f"/api/documents/{borealis}", headers=h).status_code == 200

        # a stranger's collection is a missing one, for a chat too
        stranger = signup(c, "stranger")
        mine = c.post("/api/collections", headers=h, json={"name": "mine"}).json()
        for res in (c.get(f"/api/collections/{mine['id']}", headers=stranger["headers"]),
                    c.post("/api/chats", headers=stranger["headers"], json={"collection_id": mine["id"]}),
                    c.post(f"/api/collections/{mine['id']}/documents", headers=stranger["headers"],
                           json={"document_ids": [aurora]})):
            assert res.status_code == 404, res.text
        their = c.post("/api/collections", headers=stranger["headers"], json={"name": "theirs"}).json()
        res = c.post(f"/api/collections/{their['id']}/documents", headers=stranger["headers"],
                     json={"document_ids": [aurora]})
        assert res.status_code == 404 and res.json()["detail"] == "no such document in document_ids"


def test_an_empty_collection_answers_from_nothing(live) -> None:
    with live.client() as c:
        user = signup(c, "empty")
        h = user["headers"]
        coll = c.post("/api/collections", headers=h, json={"name": "empty"}).json()
        chat = c.post("/api/chats", headers=h, json={"collection_id": coll["id"]}).json()
        final = ask(c, h, chat["id"], STANDALONE)[-1]
        assert final[0] == "done" and "collection is empty" in final[1]["answer"] and final[1]["citations"] == []


def test_v1_asks_a_collection_as_a_model(live, report_pdf) -> None:
    with live.client() as c:
        user = signup(c, "v1coll")
        h = user["headers"]
        aurora = ingest(c, h, "aurora-report.pdf", report_pdf)
        c.post("/api/collections", headers=h, json={"name": "aurora", "document_ids": [aurora]})
        c.post("/api/collections", headers=h, json={"name": "nothing yet"})
        models = [m["id"] for m in c.get("/v1/models", headers=h).json()["data"]]
        assert models == ["thotqen", "thotqen:aurora", "thotqen:nothing yet"]
        body = {"messages": [{"role": "user", "content": STANDALONE}]}
        res = c.post("/v1/chat/completions", headers=h, json={**body, "model": "thotqen:aurora"})
        assert res.status_code == 200 and "5,300" in res.json()["choices"][0]["message"]["content"]
        assert {x["document_id"] for x in res.json()["citations"]} == {aurora}
        res = c.post("/v1/chat/completions", headers=h, json={**body, "model": "thotqen", "collection": "aurora"})
        assert res.status_code == 200
        assert c.post("/v1/chat/completions", headers=h,
                      json={**body, "model": "thotqen:nothing yet"}).status_code == 400
        stranger = signup(c, "v1stranger")
        for who in (stranger["headers"], h):  # someone else's collection is as unknown as a made-up one
            res = c.post("/v1/chat/completions", headers=who,
                         json={**body, "model": "thotqen:aurora" if who is stranger["headers"] else "thotqen:nobody"})
            assert res.status_code == 404 and res.json()["error"]["type"] == "not_found_error"


def test_search_finds_documents_and_an_old_answer_of_the_owner_only(live, report_pdf) -> None:
    with live.client() as c:
        user = signup(c, "finder")
        h = user["headers"]
        ingest(c, h, "aurora-report.pdf", report_pdf)
        old = c.post("/api/chats", headers=h, json={"title": "Headcount"}).json()
        ask(c, h, old["id"], STANDALONE)
        c.post("/api/chats", headers=h, json={"title": "Something else"})

        found = c.get("/api/search", headers=h, params={"q": "people employ"}).json()
        assert [x["id"] for x in found["chats"]] == [old["id"]]
        hit = found["chats"][0]
        assert hit["message_id"] and "\x02" in hit["snippet"] and "\x03" in hit["snippet"]
        answer = c.get("/api/search", headers=h, params={"q": "figure"}).json()["chats"]
        assert answer and answer[0]["role"] == "assistant"  # the answer's figure, not only the question
        assert c.get("/api/search", headers=h, params={"q": "headc"}).json()["chats"][0]["id"] == old["id"]  # a prefix
        assert [d["name"] for d in c.get("/api/search", headers=h, params={"q": "AURORA-rep"}).json()["documents"]] \
            == ["aurora-report.pdf"]
        assert c.get("/api/search", headers=h, params={"q": "%_"}).json() == {"documents": [], "chats": []}

        stranger = signup(c, "finder-stranger")
        assert c.get("/api/search", headers=stranger["headers"], params={"q": "people employ"}).json() == \
            {"documents": [], "chats": []}
        for bad in ("", "x" * 201, "a\x00b"):
            assert c.get("/api/search", headers=h, params={"q": bad}).status_code == 422, bad
        assert c.get("/api/search", headers=h, params={"q": "a", "limit": 21}).status_code == 422
