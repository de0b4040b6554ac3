"""The whole flow over real HTTP: sign up, upload a real PDF, follow its progress, ask, follow up."""

from __future__ import annotations

from tests.server.conftest import FACTS, STANDALONE, ask, follow_job, signup, upload


def test_signup_upload_progress_ask_follow_up(live, fake_llm, report_pdf) -> None:
    with live.client() as c:
        user = signup(c, "flow")
        h = user["headers"]
        res = upload(c, h, "aurora-report.pdf", report_pdf)
        assert res.status_code == 202, res.text
        body = res.json()
        assert body["reused"] is False and body["job_id"] and body["document_id"]

        events = follow_job(c, h, body["job_id"])
        progress = [data for name, data in events if name == "progress"]
        assert [name for name, _ in events][-1] == "done"
        assert progress and progress[-1] == {"stage": "done", "percent": 100.0}
        percents = [p["percent"] for p in progress]
        assert percents == sorted(percents) and 0 <= percents[0] < 100
        assert set(p["stage"] for p in progress) >= {"done"}
        done = events[-1][1]
        assert done["document_id"] == body["document_id"] and done["pages"] == 8 and done["chunks"] > 0

        doc = c.get(f"/api/documents/{body['document_id']}", headers=h).json()
        assert doc["status"] == "ready" and doc["pages"] == 8 and doc["chunks"] == done["chunks"]
        assert doc["error"] is None
        assert [d["id"] for d in c.get("/api/documents", headers=h).json()["documents"]] == [body["document_id"]]
        job = c.get(f"/api/jobs/{body['job_id']}", headers=h).json()
        assert job["status"] == "done" and job["percent"] == 100

        chat = c.post("/api/chats", headers=h, json={"title": "Aurora"})
        assert chat.status_code == 201, chat.text
        chat_id = chat.json()["id"]
        assert chat.json()["document_ids"] is None  # all of the user's documents

        answer = ask(c, h, chat_id, "What was Aurora Widgets' total revenue in fiscal 2023?")
        names = [name for name, _ in answer]
        # the model's progress first (never its unchecked text), then the checked answer: its sources before its tokens
        assert names[0] == "draft" and names[-1] == "done" and names.count("sources") == 1 and "token" in names
        assert names.index("draft") < names.index("sources") < names.index("token")
        assert all(set(d) == {"chars"} for n, d in answer if n == "draft")
        sources = answer[names.index("sources")][1]["sources"]
        done = answer[-1][1]
        assert "".join(d["token"] for n, d in answer if n == "token").strip() == done["answer"]
        assert FACTS["revenue"] in done["answer"]
        assert done["provider"] == "vllm" and done["cached"] is False
        assert done["route"][0] == "guardrail" and done["route"][-1] == "verify"
        cited = done["cited"]
        assert cited and all(1 <= n <= len(done["citations"]) for n in cited)
        first = done["citations"][cited[0] - 1]
        assert first["document_id"] == body["document_id"] and FACTS["revenue"] in first["text"]
        assert first["page"] in (1, 2)  # the revenue topic fills the report's first two pages
        assert sources == done["citations"]  # the same entries under the same numbers, not just the numbers

        # a follow-up: the server keeps the history and hands it to the graph (condensed first)
        before = len(fake_llm.prompts("condense"))
        follow = ask(c, h, chat_id, "And how many people did it employ?")
        done2 = follow[-1][1]
        assert follow[-1][0] == "done", follow
        assert done2["route"][:2] == ["guardrail", "condense"]
        assert done2["standalone_question"] == STANDALONE
        condense_prompt = fake_llm.prompts("condense")[before]
        assert "What was Aurora Widgets' total revenue" in condense_prompt and done["answer"] in condense_prompt
        assert FACTS["employ"] in done2["answer"]
        assert FACTS["employ"] in done2["citations"][done2["cited"][0] - 1]["text"]

        # the chat keeps both turns with their citations, in order
        full = c.get(f"/api/chats/{chat_id}", headers=h).json()
        roles = [(m["role"], m["status"]) for m in full["messages"]]
        assert roles == [("user", "ok"), ("assistant", "ok")] * 2
        assert full["messages"][1]["content"] == done["answer"]
        assert full["messages"][1]["citations"] == done["citations"]
        assert full["messages"][3]["meta"]["provider"] == "vllm"
        listed = c.get("/api/chats", headers=h).json()["chats"]
        assert [(x["id"], x["message_count"]) for x in listed] == [(chat_id, 4)]


def test_repeat_question_is_served_from_cache(live, fake_llm, owner_with_report) -> None:
    h = owner_with_report["headers"]
    question = "What was Aurora Widgets' total revenue in fiscal 2023?"
    with live.client() as c:
        first_chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        miss = ask(c, h, first_chat, question)
        calls = len(fake_llm.requests)
        second_chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        hit = ask(c, h, second_chat, question.replace("?", " ?"))  # near-identical wording
        assert miss[-1][1]["cached"] is False
        assert hit[-1][0] == "done" and hit[-1][1]["cached"] is True
        assert hit[-1][1]["answer"] == miss[-1][1]["answer"]
        assert hit[-1][1]["citations"] == miss[-1][1]["citations"]
        # the graph (and the model) never ran: what makes a hit cheap (a wall-time comparison of two
        # sub-second requests does not hold on a busy machine)
        assert len(fake_llm.requests) == calls

        # a scoped chat is another scope: no hit from the all-documents answer
        scoped = c.post("/api/chats", headers=h, json={"document_ids": [owner_with_report["document_id"]]}).json()
        assert scoped["document_ids"] == [owner_with_report["document_id"]]
        assert ask(c, h, scoped["id"], question)[-1][1]["cached"] is False

        # deleting the document invalidates the cached answers over it
        assert c.delete(f"/api/documents/{owner_with_report['document_id']}", headers=h).status_code == 204
        third = c.post("/api/chats", headers=h, json={}).json()["id"]
        after = ask(c, h, third, question)
        assert after[-1][1]["cached"] is False
        assert "412 million" not in after[-1][1]["answer"]  # nothing left to answer from
