"""Scripted fake chat models for graph tests, run through the REAL LLMChain.

`ScriptedChatModel` answers by the node that asks (HyDE, grading, condensing, rewriting,
answering; the chain names it in the NODE_HEADER it sends the self-hosted links, from the call's
metadata; never by the prompt's wording), using callables the test supplies, and records every prompt. `scripted_chain`
builds a real `LLMChain` with one `vllm` link whose chat model is the scripted one, so the
chain's cut-offs, streaming and metadata are the product's own code. `node_runtime` is what
LangGraph hands a node, for tests that call one directly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.runtime import Runtime
from pydantic import ConfigDict, Field

from evals import local_http
from evals.fake_openai import kind_of
from graph.context import Context, GraphParts
from providers.llm import NODE_HEADER, LLMChain
from tests.support.settings import make_settings


class ScriptedChatModel(BaseChatModel):
    """`script(kind, prompt) -> reply text`; every call is kept in `calls` as (kind, prompt)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Callable[[str, str], str]
    calls: list[tuple[str, str]] = Field(default_factory=list)
    # P(yes) of excerpt n, given back as token log-probabilities (as llama.cpp does) when asked for
    p_yes: Callable[[int], float] | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _reply(self, messages: list[BaseMessage], extra_headers: dict[str, str] | None) -> str:
        """The script's reply, by the node the chain names in the request's NODE_HEADER (as a
        self-hosted server is told; LangChain hands `_stream` no run manager to read metadata from)."""
        prompt = "\n".join(str(m.content) for m in messages)
        kind = kind_of((extra_headers or {}).get(NODE_HEADER))
        self.calls.append((kind, prompt))
        return self.script(kind, prompt)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        reply = self._reply(messages, kwargs.get("extra_headers"))
        metadata = {"logprobs": {"content": self._tokens(reply)}} if kwargs.get("logprobs") and self.p_yes else {}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply, response_metadata=metadata))])

    def _tokens(self, reply: str) -> list[dict[str, Any]]:
        """`reply` as tokens; each verdict word's alternatives weigh yes and no by `p_yes`."""
        assert self.p_yes is not None
        tokens, at = [], 0
        for m in re.finditer(r'"excerpt_(\d+)"\s*:\s*"(yes|no)', reply):
            p = min(max(self.p_yes(int(m.group(1))), 1e-6), 1 - 1e-6)
            tokens.append({"token": reply[at:m.start(2)], "logprob": 0.0, "top_logprobs": []})
            tokens.append({"token": m.group(2), "logprob": math.log(p if m.group(2) == "yes" else 1 - p),
                           "top_logprobs": [{"token": "yes", "logprob": math.log(p)},
                                            {"token": "no", "logprob": math.log(1 - p)}]})
            at = m.end(2)
        return [*tokens, {"token": reply[at:], "logprob": 0.0, "top_logprobs": []}]

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for piece in re.findall(r"\S+\s*", self._reply(messages, kwargs.get("extra_headers"))):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]

    def prompts(self, kind: str) -> list[str]:
        return [prompt for k, prompt in self.calls if k == kind]


def scripted_chain(script: Callable[[str, str], str], link: str = "vllm") -> tuple[LLMChain, ScriptedChatModel]:
    """A chain of one link (`vllm`, or the embedded `local` one) answering by `script`."""
    settings = make_settings(vllm_base_url="http://scripted.invalid/v1", vllm_model="scripted", llm_order=link,
                             local_llm=link == "local")
    chain = LLMChain(settings)
    model = ScriptedChatModel(script=script)
    chain._models[link] = model  # the chain builds models lazily; this one is already "built"
    return chain, model


def node_runtime(parts: GraphParts, **knobs: Any) -> Runtime[Context]:
    """What LangGraph hands a node, for calling one directly: a run's context over `parts`."""
    return Runtime(context=Context.for_run(parts, knobs))


class FakeWeb:
    def __init__(self, results: list[dict[str, str]]) -> None:
        self.results = results
        self.queries: list[str] = []
        self.last_failures: list[tuple[str, str]] = []
        self.available = True

    def search(self, query: str, k: int = 5) -> list[dict[str, str]]:
        self.queries.append(query)
        return self.results[:k]


class ExplodingDatabase:
    """For paths that must never reach retrieval."""

    def connection(self) -> Any:
        raise AssertionError("retrieval reached")


class FakeLangSmith:
    """A local LangSmith endpoint: `GET /info` answers `{}`, `POST /runs/multipart` (and the older
    /runs, /runs/batch) are recorded. `runs()` merges each run's post and patch parts by id.

    For the read side (`Client.list_runs`, admin metrics) it also answers `GET /sessions?name=`
    with the project `project` and `POST /runs/query` with `stored_runs` in pages of `page_size`
    (the SDK follows `cursors.next`), recording each query body in `queries`."""

    PROJECT_ID = "5f0c8a52-7d43-4c57-9a39-6a4f3c1e2b10"
    TENANT_ID = "0b9e1c7e-2f5d-4c8a-8d7e-3a6b5c4d2e1f"

    def __init__(self, project: str = "thotqen-test", stored_runs: list[dict[str, Any]] | None = None,
                 page_size: int = 2) -> None:
        import email.parser
        import json
        from urllib.parse import parse_qs, urlparse

        from evals.local_http import JSONHandler

        self.parts: list[tuple[str, dict[str, Any]]] = []
        self.paths: list[str] = []
        self.queries: list[dict[str, Any]] = []
        self.stored_runs = stored_runs or []
        outer = self

        class Handler(JSONHandler):
            def _reply(self, payload: dict[str, Any] | list[Any]) -> None:
                self.send_json(200, payload)

            def do_GET(self) -> None:
                outer.paths.append(f"GET {self.path}")
                url = urlparse(self.path)
                if url.path == "/sessions":
                    asked = parse_qs(url.query).get("name", [""])[0]
                    found = [{"id": outer.PROJECT_ID, "tenant_id": outer.TENANT_ID, "name": project,
                              "reference_dataset_id": None}] if asked == project else []
                    self._reply(found)  # type: ignore[arg-type]
                    return
                self._reply({})

            def _query(self, body: dict[str, Any]) -> None:
                outer.queries.append(body)
                start = int(body.get("cursor") or 0)
                page = outer.stored_runs[start:start + page_size]
                more = start + page_size < len(outer.stored_runs)
                self._reply({"runs": page, "cursors": {"next": str(start + page_size) if more else None}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if (self.headers.get("Content-Encoding") or "").lower() == "zstd":
                    import zstandard

                    raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
                outer.paths.append(f"POST {self.path}")
                if self.path == "/runs/query":
                    self._query(json.loads(raw))
                    return
                ctype = self.headers.get("Content-Type") or ""
                if "multipart" in ctype:
                    msg = email.parser.BytesParser().parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
                    for part in msg.walk():
                        name = part.get_param("name", header="content-disposition")
                        body = part.get_payload(decode=True)
                        if name and body:
                            try:
                                outer.parts.append((name, json.loads(body)))
                            except ValueError:
                                continue
                elif raw:
                    data = json.loads(raw)
                    for op in ("post", "patch"):
                        for run in data.get(op, []) if isinstance(data, dict) and op in data else []:
                            outer.parts.append((f"{op}.{run['id']}", run))
                    if isinstance(data, dict) and "id" in data and "post" not in data:
                        outer.parts.append((f"post.{data['id']}", data))
                self._reply({})

            do_PATCH = do_POST

        self.server = local_http.serve(Handler)

    @property
    def url(self) -> str:
        return local_http.url(self.server)

    def runs(self) -> dict[str, dict[str, Any]]:
        merged: dict[str, dict[str, Any]] = {}
        for name, payload in self.parts:
            op, run_id, *field = name.split(".")
            run = merged.setdefault(run_id, {"id": run_id})
            if field:
                run[field[0]] = payload
            elif isinstance(payload, dict):
                run.update({k: v for k, v in payload.items() if v is not None or k not in run})
        return merged

    def close(self) -> None:
        local_http.stop(self.server)
