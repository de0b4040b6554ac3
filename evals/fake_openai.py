"""A small scripted OpenAI-compatible chat server: the stand-in model of the load test and the tests.

The load test (evals/loadtest.py) measures the server with only the LLM replaced, so the stand-in
lives here, where measurements may import it; tests import it from here too (evals never import tests).

`FakeOpenAI(script)` listens on 127.0.0.1 at a free port and answers `/v1/chat/completions`
(streamed or not) and `/v1/models`. The reply to each request is `script(kind, prompt)`, where
`kind` says what the graph asks (grade, answer, choose, hyde, condense, rewrite, guard, other; see
`kind_of`), told by the node the request names in its NODE_HEADER header. It is safe under
concurrent requests (each request computes its own reply), can add a delay per request (`delay_s`,
and `kind_delay_s` per kind) and between streamed pieces (`token_delay_s`) to imitate a slow model,
and records every request. Like llama.cpp, it watches the connection while it "computes" a reply: a
client that closes it then is recorded as `left` and gets nothing.
Point the product at it with LLM_ORDER=vllm and VLLM_BASE_URL=<fake.url>/v1 (`subprocess_env`).
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from evals import local_http
from evals.local_http import JSONHandler
from providers.llm import NODE_HEADER

Script = Callable[[str, str], str]

_EXCERPT = re.compile(r"^\[(\d+)\] \((.*?)\)\n(.*?)(?=\n\n\[\d+\] \(|\n\nQuestion: |\n\nConversation so far:)",
                      re.DOTALL | re.MULTILINE)


def excerpts_in(prompt: str) -> list[tuple[int, str, str]]:
    """(n, where, text) of each numbered excerpt in a grading or answering prompt."""
    return [(int(m.group(1)), m.group(2), m.group(3)) for m in _EXCERPT.finditer(prompt)]


# The kinds the scripts answer, by the graph node that asks (its name comes with each request as the
# NODE_HEADER header, providers/llm/chain.py); a call made outside a node is "other".
KINDS = {"grade": "grade", "generate": "answer", "choose": "choose", "hyde": "hyde", "condense": "condense",
         "rewrite": "rewrite", "guardrail": "guard", "verify": "confirm"}


def kind_of(node: str | None) -> str:
    """What the graph asks for, told by the node that asks, never by the prompt's wording (so a
    reworded prompt still gets its node's reply)."""
    return KINDS.get(node or "", "other")


def grades_json(prompt: str, relevant: Callable[[str], bool]) -> str:
    """The structured grading reply: {"excerpt_1": "yes"|"no", ...}."""
    items = [f'"excerpt_{n}": "{"yes" if relevant(text) else "no"}"'
             for n, _where, text in excerpts_in(prompt)]
    return "{" + ", ".join(items) + "}"


def _client_leaves(conn: socket.socket, seconds: float) -> bool:
    """Wait `seconds`, True as soon as the client closes the connection (as llama.cpp's server polls)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([conn], [], [], min(left, 0.05))
        if readable:
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
            time.sleep(min(left, 0.05))  # bytes we do not read (a pipelined request): keep waiting
    return False


class FakeOpenAI:
    def __init__(self, script: Script, *, model: str = "fake-model", delay_s: float = 0.0,
                 token_delay_s: float = 0.0) -> None:
        self.script = script
        self.model = model
        self.delay_s = delay_s
        self.token_delay_s = token_delay_s  # between streamed pieces, so a reader can watch them arrive
        self.kind_delay_s: dict[str, float] = {}  # more delay before the reply to one kind ("grade": 60)
        # {"kind", "prompt", "stream", "pieces": streamed pieces sent, "completed": the stream ran to its
        # end (False: the client closed it mid-way, as a stopped answer does), "left": the client closed
        # the connection while the reply was being "computed" (its delay)}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(JSONHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self.send_json(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    self.send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_json(404, {"error": {"message": "not found"}})
                    return
                body = json.loads(raw or b"{}")
                fake.reply(self, body, self.headers.get(NODE_HEADER))

        self.server = local_http.serve(Handler)

    @property
    def url(self) -> str:
        return local_http.url(self.server)

    def kinds(self) -> list[str]:
        with self._lock:
            return [r["kind"] for r in self.requests]

    def prompts(self, kind: str) -> list[str]:
        with self._lock:
            return [r["prompt"] for r in self.requests if r["kind"] == kind]

    def close(self) -> None:
        local_http.stop(self.server)

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reply(self, h: Any, body: dict[str, Any], node: str | None = None) -> None:
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        kind = kind_of(node)
        stream = bool(body.get("stream"))
        record: dict[str, Any] = {"kind": kind, "node": node, "prompt": prompt, "stream": stream, "pieces": 0,
                                  "completed": False, "left": False}
        with self._lock:
            self.requests.append(record)
        text = self.script(kind, prompt)
        delay = self.delay_s + self.kind_delay_s.get(kind, 0.0)
        if delay and _client_leaves(h.connection, delay):
            record["left"] = True
            return
        usage = {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": max(1, len(text) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if not stream:
            h.send_json(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                          "model": self.model, "usage": usage,
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                       "finish_reason": "stop"}]})
            record["completed"] = True
            return
        try:
            self._stream(h, body, text, usage, record)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client went away mid-stream; `completed` stays False

    def _stream(self, h: Any, body: dict[str, Any], text: str, usage: dict[str, int],
                record: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def send(payload: dict[str, Any] | str) -> None:
            line = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n".encode()
            h.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            h.wfile.flush()

        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": self.model}
        for i, piece in enumerate(re.findall(r"\S+\s*", text) or [""]):
            if i and self.token_delay_s:
                time.sleep(self.token_delay_s)
            send({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                                       "finish_reason": None}]})
            record["pieces"] += 1
        send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            send({**base, "choices": [], "usage": usage})
        send("[DONE]")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
        record["completed"] = True


# Provider and database settings a developer's shell may hold; a subprocess under test must not see them
# (LLM_LINKS would replace the card's chain, whose `vllm` link the fake answers as).
CLOUD_SETTINGS = ("DATABASE_URL", "LLM_LINKS", "NVIDIA_API_KEY", "GROQ_API_KEY", "GROQ_API_KEY_2", "GEMINI_API_KEY",
                  "GEMINI_API_KEY_2", "GOOGLE_API_KEY", "GOOGLE_API_KEY_2", "OPENROUTER_API_KEY", "TAVILY_API_KEY")


def subprocess_env(fake: FakeOpenAI, home: str, **extra: str) -> dict[str, str]:
    """The environment of a `python -m cli` / eval subprocess answered by `fake` (web and reranker off)."""
    import os

    env = {**os.environ, "THOTQEN_HOME": home, "LOCAL_LLM": "false", "LLM_ORDER": "vllm",
           "VLLM_BASE_URL": f"{fake.url}/v1", "VLLM_MODEL": fake.model,
           "WEB_SEARCH": "false", "RERANKER": "none", **extra}
    for key in CLOUD_SETTINGS:
        env.pop(key, None)
    return env
