"""A server whose answers run in one answer process of its own (the real runtime, no handed parts,
so ANSWER_PROCESSES applies) with one answer place, its LLM chain pointed at a slow scripted model
server, and an owner with the report uploaded: what tests/server/test_answer_processes.py and
tests/server/test_fair_answers.py share (each keeps its own waiting list, ANSWER_QUEUE)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evals.fake_openai import FakeOpenAI
from settings import Settings
from tests.server.conftest import follow_job, signup, upload
from tests.server.test_chat_actions import slow_script


def slow_model() -> Iterator[FakeOpenAI]:
    """The scripted model (fast unless a test slows its pieces: token_delay_s), closed afterwards."""
    fake = FakeOpenAI(slow_script)
    yield fake
    fake.close()


def answer_process_settings(database_url: str, model: FakeOpenAI, *, answer_queue: int) -> Settings:
    # validated, not copied: the LLM links are read from these fields when settings are made
    return Settings(
        database_url=database_url, vllm_base_url=f"{model.url}/v1", vllm_model="fake-model", llm_order="vllm",
        reranker="none", answer_cache=False, web_search=False, upload_max_mb=1.0, login_ip_limit=100_000,
        questions_per_hour=10_000, questions_per_minute=10_000, forwarded_allow_ips="127.0.0.1",
        answer_processes=1, answers_per_process=1, answer_queue=answer_queue)


def report_owner(served: Any, name: str, report_pdf: bytes) -> dict[str, Any]:
    """A new account (`signup`'s dict, with its `id`) whose upload of the report is ingested (its
    `document_id`)."""
    with served.client() as c:
        user = signup(c, name)
        res = upload(c, user["headers"], "aurora-report.pdf", report_pdf)
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
        user["id"] = c.get("/api/auth/me", headers=user["headers"]).json()["id"]
        return {**user, "document_id": res.json()["document_id"]}
