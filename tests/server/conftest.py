"""A live server (uvicorn on a real port) on the real embedded Postgres and embedder, with the real
provider chain pointed at a local OpenAI-compatible fake (evals/fake_openai.py)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from evals.fake_openai import FakeOpenAI, excerpts_in, grades_json
from tests.support.fakes import FakeWeb

ADMIN = "root-admin"
FACTS = {"employ": "5,300", "dividend": "18 cents", "revenue": "412 million"}
STANDALONE = "How many people did Aurora Widgets employ at the end of fiscal 2023?"


def fact_for(prompt: str) -> str:
    question = prompt.rsplit("Question:", 1)[-1].lower()
    return next((fact for word, fact in FACTS.items() if word in question), FACTS["revenue"])


def script(kind: str, prompt: str) -> str:
    """Grades an excerpt relevant when it holds the fact the question asks for; answers citing it.
    A question over a statement's table (tests/web/test_checked_journey.py) is answered as a small
    model would: the calculation code did by its tag, and general knowledge citing whatever it saw."""
    question = prompt.rsplit("Question:", 1)[-1]
    if "divided by" in question or "capital of Peru" in question:
        if kind == "grade":
            return grades_json(prompt, lambda text: True)
        if kind == "answer":
            return ("The ratio of cost of revenue to net revenue is {C}." if "Computed by code" in prompt
                    else "Lima is the capital of Peru [1].")
    if "sentence by sentence" in question:  # a long answer, one fact a sentence (tests/server/test_openai_compat.py)
        if kind == "grade":
            return grades_json(prompt, lambda text: FACTS["revenue"] in text or FACTS["employ"] in text)
        if kind == "answer":
            return long_answer(prompt, "auditors" in question)
    if "auditors" in question and kind == "answer":  # a draft the check withholds: a figure no excerpt has
        return "Aurora Widgets paid its auditors 987 million [1]."
    if "sleep hygiene" in question:  # a protocol, not a filing (tests/web/test_other_documents.py)
        if kind == "grade":
            return grades_json(prompt, lambda text: "participants" in text)
        if kind == "answer":
            n = next((n for n, _where, text in excerpts_in(prompt) if "20 participants" in text), 1)
            return f"The study will recruit 20 participants, as stated in the excerpt [{n}]."
    if kind == "grade":
        fact = fact_for(prompt)
        return grades_json(prompt, lambda text: fact in text)
    if kind == "answer":
        fact = fact_for(prompt)
        n = next((n for n, _where, text in excerpts_in(prompt) if fact in text), 1)
        return f"The figure is {fact} [{n}]."
    if kind == "condense":
        return STANDALONE
    if kind == "hyde":
        return "Aurora Widgets reported total revenue and headcount for fiscal 2023."
    return "Aurora Widgets fiscal 2023"


def long_answer(prompt: str, unsupported: bool) -> str:
    """Four sentences citing the excerpts that hold them; `unsupported`: the third states a figure no
    excerpt holds, which the check drops."""
    found = excerpts_in(prompt)
    r = next((n for n, _where, text in found if FACTS["revenue"] in text), 1)
    e = next((n for n, _where, text in found if FACTS["employ"] in text), 1)
    third = (f"Aurora Widgets paid its auditors 987 million dollars in fiscal 2023 [{r}]. " if unsupported
             else f"Aurora Widgets reported total revenue of {FACTS['revenue']} dollars [{r}]. ")
    return (f"Aurora Widgets reported total revenue of {FACTS['revenue']} dollars in fiscal 2023 [{r}]. "
            f"Aurora Widgets employed {FACTS['employ']} people at the end of fiscal 2023 [{e}]. " + third
            + f"Aurora Widgets employed {FACTS['employ']} people [{e}].")


class LiveServer:
    """uvicorn serving an app on 127.0.0.1 at a free port, in a thread; stop() shuts it down cleanly."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        from settings import uvicorn_options

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.app = app
        # the proxy settings `thotqen serve` uses (tests that act as a proxy configure 127.0.0.1)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    **uvicorn_options(app.state.settings)))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.05)

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120, **kwargs)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def read_sse(response: httpx.Response) -> list[tuple[str, Any]]:
    """(event, parsed JSON data) pairs of a text/event-stream response, comments (pings) skipped."""
    events: list[tuple[str, Any]] = []
    event, data = None, []
    for line in response.iter_lines():
        if line == "":
            if event or data:
                events.append((event or "message", json.loads("\n".join(data)) if data else None))
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if event or data:
        events.append((event or "message", json.loads("\n".join(data)) if data else None))
    return events


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(script)
    yield fake
    fake.close()


@pytest.fixture(scope="session")
def parts(fake_llm: FakeOpenAI, runtime, db, embedder) -> dict[str, Any]:
    """What each server's runtime is given in place of the real part (build_runtime's keywords): the real
    LLMChain with one `vllm` link (langchain-openai over HTTP to the fake), no reranker, a fake web search,
    and the session's database, embedder and classifiers."""
    from providers.llm import LLMChain
    from providers.reranker import NoReranker
    from tests.support.settings import make_settings

    chain = LLMChain(make_settings(vllm_base_url=f"{fake_llm.url}/v1", vllm_model="fake-model", llm_order="vllm"))
    return {"chain": chain, "embedder": embedder, "reranker": NoReranker(), "web": FakeWeb([]), "database": db,
            "guard": runtime.guard, "screen": runtime.screen}


@pytest.fixture(scope="session")
def server_settings(settings):
    # the tests' client acts as the proxy in front: unique_ip() addresses come in X-Forwarded-For
    return settings.model_copy(update={"upload_max_mb": 1.0, "login_ip_limit": 100_000, "questions_per_hour": 10_000,
                                       "questions_per_minute": 10_000, "question_tokens_per_minute": 10_000_000,
                                       "question_tokens_per_hour": 10_000_000, "thotqen_admins": ADMIN,
                                       "web_search": False, "forwarded_allow_ips": "127.0.0.1"})


@contextlib.contextmanager
def _servers(parts: dict[str, Any]) -> Iterator[Callable[..., LiveServer]]:
    """Start live servers for an app over a runtime of these settings and `parts` (default: the
    fixture's); every one stops on leaving."""
    from runtime import build_runtime
    from server import create_app

    started: list[LiveServer] = []

    def start(settings: Any, parts: dict[str, Any] = parts, **kwargs: Any) -> LiveServer:
        live = LiveServer(create_app(runtime=build_runtime(settings, **parts), **kwargs))
        started.append(live)
        return live

    try:
        yield start
    finally:
        for live in started:
            live.stop()


@pytest.fixture(scope="package")
def start_server(parts) -> Iterator[Callable[..., LiveServer]]:
    """Servers that stop after tests/server (each has an ingestion worker reading the shared queue)."""
    with _servers(parts) as start:
        yield start


@pytest.fixture
def own_server(parts) -> Iterator[Callable[..., LiveServer]]:
    """Servers that stop when their test ends: one whose files live elsewhere (another home, Supabase
    Storage) must not keep a worker that claims other tests' jobs and fails them."""
    with _servers(parts) as start:
        yield start


@pytest.fixture(scope="package")
def live(start_server, server_settings) -> LiveServer:
    return start_server(server_settings)


@pytest.fixture
def client(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client() as c:
        yield c


def unique_ip() -> str:
    """A client address of its own (the test servers trust X-Forwarded-For from 127.0.0.1), so per-IP limits
    counted in the shared database do not mix between tests."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def signup(client: httpx.Client, prefix: str = "user", password: str = "correct horse battery") -> dict[str, Any]:
    """A fresh account: {"username", "password", "headers", "tokens"}."""
    username = f"{prefix}-{uuid.uuid4().hex[:8]}"
    res = client.post("/api/auth/signup", json={"username": username, "password": password},
                      headers={"X-Forwarded-For": unique_ip()})
    assert res.status_code == 201, res.text
    tokens = res.json()
    return {"username": username, "password": password, "tokens": tokens,
            "headers": {"Authorization": f"Bearer {tokens['access_token']}"}}


def operator_account(db: Any, username: str, password: str) -> None:
    """The web account `thotqen account USERNAME` makes (cli.py cmd_account): how an admin named in
    THOTQEN_ADMINS gets an account, since web signup refuses those names. Kept on a rerun."""
    from identity.security import hash_password
    from storage import accounts

    with db.connection() as conn:
        accounts.create_password_user(conn, username=username, password_hash=hash_password(password))


def login_headers(client: httpx.Client, username: str, password: str) -> dict[str, str]:
    res = client.post("/api/auth/login", json={"username": username, "password": password},
                      headers={"X-Forwarded-For": unique_ip()})
    assert res.status_code == 200, res.text
    return {"Authorization": f"Bearer {res.json()['access_token']}"}


def upload(client: httpx.Client, headers: dict[str, str], name: str, data: bytes,
           content_type: str = "application/pdf") -> httpx.Response:
    return client.post("/api/documents", headers=headers, files={"file": (name, data, content_type)})


def follow_job(client: httpx.Client, headers: dict[str, str], job_id: str) -> list[tuple[str, Any]]:
    with client.stream("GET", f"/api/jobs/{job_id}/events", headers=headers) as res:
        assert res.status_code == 200, res.read()
        assert res.headers["content-type"].startswith("text/event-stream")
        return read_sse(res)


def ask(client: httpx.Client, headers: dict[str, str], chat_id: str, question: str) -> list[tuple[str, Any]]:
    with client.stream("POST", f"/api/chats/{chat_id}/messages", headers=headers, json={"question": question}) as res:
        assert res.status_code == 200, res.read()
        return read_sse(res)


@pytest.fixture(scope="session")
def report_pdf() -> bytes:
    from evals.pdfs import AURORA_TOPICS, long_report

    return long_report(AURORA_TOPICS, pages_per_topic=2)


@pytest.fixture
def owner_with_report(live: LiveServer, report_pdf: bytes) -> dict[str, Any]:
    """A fresh user who owns the 8-page report, ingested to the end; adds "document_id"."""
    with live.client() as c:
        user = signup(c, "owner")
        res = upload(c, user["headers"], "aurora-report.pdf", report_pdf)
        assert res.status_code == 202, res.text
        events = follow_job(c, user["headers"], res.json()["job_id"])
        assert events[-1][0] == "done", events
        return {**user, "document_id": res.json()["document_id"]}
