"""Locust clients for evals/loadtest.py (which seeds accounts and starts the server).

BrowseClient: the reads a front end makes (documents, one document, its job, chats, one chat).
AskClient: opens a chat and asks a question, reading the SSE answer to its `done` event; an
`error` or `blocked` event, or a stream without `done`, counts as a failure.
LOAD_SEED names the JSON file of seeded accounts: [{"token", "document_id", "job_id", "chat_id"}].
"""

from __future__ import annotations

import json
import os
import random

from locust import HttpUser, between, task

SEED = json.loads(open(os.environ["LOAD_SEED"]).read())  # noqa: SIM115 - read once per worker
METRICS = ["total revenue", "headcount", "the dividend", "operating income", "capital expenditure", "net income",
           "cash and cash equivalents", "research spending", "gross margin", "inventory"]
YEARS = ["2019", "2020", "2021", "2022", "2023"]


class _Seeded(HttpUser):
    abstract = True
    wait_time = between(0.5, 1.5)  # a person's pause between actions

    def on_start(self) -> None:
        self.account = random.choice(SEED["accounts"])
        self.headers = {"Authorization": f"Bearer {self.account['token']}"}


class BrowseClient(_Seeded):
    @task(3)
    def documents(self) -> None:
        self.client.get("/api/documents", headers=self.headers)

    @task(2)
    def document(self) -> None:
        self.client.get(f"/api/documents/{self.account['document_id']}", headers=self.headers,
                        name="/api/documents/{id}")

    @task(1)
    def job(self) -> None:
        self.client.get(f"/api/jobs/{self.account['job_id']}", headers=self.headers, name="/api/jobs/{id}")

    @task(3)
    def chats(self) -> None:
        self.client.get("/api/chats", headers=self.headers)

    @task(2)
    def chat(self) -> None:
        self.client.get(f"/api/chats/{self.account['chat_id']}", headers=self.headers, name="/api/chats/{id}")


class AskClient(_Seeded):
    def on_start(self) -> None:
        super().on_start()
        res = self.client.post("/api/chats", headers=self.headers, json={"title": "load"}, name="/api/chats (new)")
        self.chat_id = res.json()["id"] if res.status_code in (200, 201) else self.account["chat_id"]

    @task
    def ask(self) -> None:
        question = f"What was {random.choice(METRICS)} in fiscal {random.choice(YEARS)}?"
        # Not streamed: Locust times a streamed request to its headers only; reading the whole
        # body times the answer to its `done` event (the server closes the stream after it).
        with self.client.post(f"/api/chats/{self.chat_id}/messages", headers=self.headers,
                              json={"question": question}, catch_response=True,
                              name="/api/chats/{id}/messages (SSE to done)") as res:
            if res.status_code != 200:
                res.failure(f"HTTP {res.status_code}: {res.text[:200]}")
                return
            events = [line[6:].strip() for line in res.text.splitlines() if line.startswith("event:")]
            if events[-1:] != ["done"]:
                res.failure(f"stream ended with {events[-1:] or 'nothing'}")
            else:
                res.success()
