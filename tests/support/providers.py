"""Local HTTP servers that speak the providers' protocols and misbehave on demand.

One `FakeProvider` is one endpoint with one behaviour (set `.behaviour`); it records every
request. It speaks OpenAI chat completions (used by OpenAI/OpenRouter/vLLM, Groq under
/openai/v1 and NVIDIA under /v1) and Gemini's generateContent / streamGenerateContent.
Behaviours:
  ok            answer `.text` (streamed word by word when asked to stream)
  hang          accept and never answer (until the test ends)
  429/500/401   that HTTP status with a JSON error body
  refusal       an OpenAI `refusal` (or Gemini finishReason SAFETY)
  filter        finish_reason content_filter
  empty         an empty answer
  midstream     stream two chunks, then stall forever
  proxy         forward the request to `.upstream` (a real OpenAI-compatible server)
POST /search answers like Tavily's search API when the behaviour is ok.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from evals import local_http
from evals.local_http import JSONHandler


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def key(self) -> str:
        """The API key the client sent (Bearer token, Gemini header or ?key=)."""
        auth = self.headers.get("Authorization") or self.headers.get("authorization") or ""
        if auth.lower().startswith("bearer "):
            return auth[7:]
        goog = self.headers.get("x-goog-api-key") or self.headers.get("X-Goog-Api-Key")
        if goog:
            return goog
        if "key=" in self.path:
            return self.path.split("key=", 1)[1].split("&", 1)[0]
        return ""


@dataclass
class FakeProvider:
    behaviour: str = "ok"
    text: str = "fake answer"
    model: str = "fake-model"
    upstream: str | None = None
    upstream_key: str = ""
    by_key: dict[str, str] = field(default_factory=dict)  # API key -> behaviour (one server, many accounts)
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        fake = self

        class Handler(JSONHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # http.server API
                fake.requests.append(Recorded(self.path, dict(self.headers), {}))
                self.send_json(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})

            def do_POST(self) -> None:  # http.server API
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                body = json.loads(raw or b"{}")
                record = Recorded(self.path, dict(self.headers), body)
                fake.requests.append(record)
                fake.handle(self, body, raw, fake.by_key.get(record.key, fake.behaviour))

        self.server = local_http.serve(Handler)

    @property
    def url(self) -> str:
        return local_http.url(self.server)

    def close(self) -> None:
        self.release.set()
        local_http.stop(self.server)

    # -- protocol ---------------------------------------------------------------------------
    def handle(self, h: Any, body: dict[str, Any], raw: bytes, b: str) -> None:
        gemini = ":generateContent" in h.path or ":streamGenerateContent" in h.path
        stream = bool(body.get("stream")) or ":streamGenerateContent" in h.path
        if b == "hang":
            self.release.wait(60)
            return
        if b in ("429", "500", "401"):
            h.send_json(int(b), {"error": {"message": f"fake {b}", "type": "fake", "code": int(b),
                                       "status": "FAKE"}})
            return
        if h.path == "/search":  # Tavily
            query = body.get("query")
            h.send_json(200, {"query": query, "results": [
                {"title": f"{self.text} {i}", "url": f"https://example.com/{i}", "content": f"about {query}",
                 "score": 0.9} for i in range(int(body.get("max_results") or 5))]})
            return
        if b == "proxy":
            self._proxy(h, raw, stream)
            return
        if gemini:
            self._gemini(h, stream, b)
        else:
            self._openai(h, stream, b)

    def _pieces(self) -> list[str]:
        words = self.text.split(" ")
        return [w if i == 0 else f" {w}" for i, w in enumerate(words)]

    def _openai(self, h: Any, stream: bool, b: str) -> None:
        content: str | None = "" if b in ("empty", "refusal") else self.text
        finish = "content_filter" if b == "filter" else "stop"
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if b == "refusal":
                message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
            h.send_json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": self.model,
                          "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                          "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
            return
        self._sse_start(h)
        pieces = [] if b in ("empty", "refusal") else self._pieces()
        for i, piece in enumerate(pieces):
            self._sse(h, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": self.model,
                          "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                                       "finish_reason": None}]})
            if b == "midstream" and i == 1:
                self.release.wait(60)
                return
        self._sse(h, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": self.model,
                      "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        h.wfile.write(b"data: [DONE]\n\n")
        h.wfile.flush()

    def _gemini(self, h: Any, stream: bool, b: str) -> None:
        finish = "SAFETY" if b in ("refusal", "filter") else "STOP"
        texts = [] if b in ("empty", "refusal") else (self._pieces() if stream else [self.text])

        def candidate(text: str | None, done: bool) -> dict[str, Any]:
            cand: dict[str, Any] = {"index": 0, "content": {"role": "model",
                                                            "parts": [{"text": text}] if text else []}}
            if done:
                cand["finishReason"] = finish
            return {"candidates": [cand], "modelVersion": self.model,
                    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}}

        if not stream:
            h.send_json(200, candidate(texts[0] if texts else None, True))
            return
        self._sse_start(h)
        for i, text in enumerate(texts):
            self._sse(h, candidate(text, False))
            if b == "midstream" and i == 1:
                self.release.wait(60)
                return
        self._sse(h, candidate(None, True))

    def _proxy(self, h: Any, raw: bytes, stream: bool) -> None:
        assert self.upstream, "proxy behaviour needs .upstream"
        # Groq's SDK sends explicit nulls (reasoning_format, stop) that llama.cpp's parser rejects
        body = {k: v for k, v in json.loads(raw or b"{}").items() if v is not None}
        request = urllib.request.Request(f"{self.upstream}/chat/completions", json.dumps(body).encode(),
                                         {"Content-Type": "application/json",
                                          "Authorization": f"Bearer {self.upstream_key}"})
        try:
            response = urllib.request.urlopen(request, timeout=120)
        except urllib.error.HTTPError as exc:  # hand the upstream's error back as it came
            h.send_json(exc.code, json.loads(exc.read() or b"{}"))
            return
        with response:
            if not stream:
                h.send_json(response.status, json.loads(response.read()))
                return
            self._sse_start(h)
            for line in response:
                h.wfile.write(line)
                h.wfile.flush()

    @staticmethod
    def _sse_start(h: Any) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

    @staticmethod
    def _sse(h: Any, payload: dict[str, Any]) -> None:
        h.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        h.wfile.flush()
        time.sleep(0.01)
