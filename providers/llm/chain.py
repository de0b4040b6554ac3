"""The ordered fallback chain: try each link once, under a hard cut-off, until one answers."""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from providers.llm import structured as so
from providers.llm.attempt import Attempt, declare
from providers.llm.cutoff import run_with_cutoff, stream_with_cutoff
from providers.llm.errors import LinkError, describe, refusal_reason
from providers.llm.links import LinkSpec, build_specs, make_chat_model
from providers.llm.result import AllLinksFailed, ChainResult, LinkFailure, StreamReset
from providers.protocols import LocalEndpoint

if TYPE_CHECKING:
    from settings import Settings

log = logging.getLogger(__name__)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _model_name(message: BaseMessage, spec: LinkSpec) -> str:
    meta = getattr(message, "response_metadata", {}) or {}
    return str(meta.get("model_name") or meta.get("model") or spec.model or spec.name)


def _usage(message: BaseMessage) -> dict[str, int] | None:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    return {k: int(usage.get(k, 0) or 0) for k in ("input_tokens", "output_tokens", "total_tokens")}


# Alternatives per token when probabilities are asked for: the grader needs "yes" and "no", which a
# grammar-free distribution puts among the first few.
TOP_LOGPROBS = 5


def _token_logprobs(message: BaseMessage) -> list[dict[str, Any]] | None:
    content = (message.response_metadata.get("logprobs") or {}).get("content")
    return list(content) if isinstance(content, list) else None


# Which graph node makes a call: its key in the call's RunnableConfig metadata (graph/nodes/common.py
# sets it), and the header that tells a self-hosted server (vllm, local) so, for its logs and for the
# tests' fake models, which answer by node rather than by prompt wording. Cloud links are not told.
NODE_KEY = "node"
NODE_HEADER = "X-Thotqen-Node"


def watch_of(config: RunnableConfig | None) -> Callable[[], None] | None:
    """The call's stop watches (callback handlers with `stops_calls`, answering/stopping.py's
    StopWatch) as one check that raises when any says stop; None when the run has none."""
    callbacks = (config or {}).get("callbacks")
    handlers: list[Any] = []
    if isinstance(callbacks, list):
        handlers = list(callbacks)
    elif callbacks is not None:  # a callback manager (inside a graph node)
        handlers = [*getattr(callbacks, "handlers", []), *getattr(callbacks, "inheritable_handlers", [])]
    watches = list({id(h): h for h in handlers if getattr(h, "stops_calls", False) is True}.values())
    if not watches:
        return None

    def check() -> None:
        for watch in watches:
            watch.check()

    return check


def node_of(config: RunnableConfig | None) -> str | None:
    """The node that makes a call with `config`, None outside one."""
    node = ((config or {}).get("metadata") or {}).get(NODE_KEY)
    return str(node) if node else None


def _first_model(base_url: str, api_key: str) -> str:
    """The first model an OpenAI-compatible server lists (for a link that names no model)."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/models",
                                     headers={"Authorization": f"Bearer {api_key}"})
    with urllib.request.urlopen(request, timeout=5.0) as response:
        return str(json.load(response)["data"][0]["id"])


class LLMChain:
    """Ordered provider links; see the package docstring for the contract."""

    def __init__(self, settings: Settings, local: Callable[[], LocalEndpoint] | None = None) -> None:
        """`local` starts or finds the embedded model's server (the `local` link asks it); without it
        that link fails with a reason."""
        self.settings = settings
        self._local = local
        self.specs, self.left_out = build_specs(settings)
        self._models: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}  # one build per link at a time
        self.builds: dict[str, int] = {}  # how many times each link's client was built
        for spec in self.specs:
            declare(spec.name)
        if self.left_out:
            log.info("LLM links left out (no credentials or disabled): %s", ", ".join(self.left_out))

    @property
    def links(self) -> list[str]:
        return [spec.name for spec in self.specs]

    def links_for(self, cheap: bool) -> list[LinkSpec]:
        return [spec for spec in self.specs if not (cheap and spec.complex_only)]

    def asks_local_first(self, cheap: bool = False) -> bool:
        """Whether such a call goes to the embedded model first (no configured link before it)."""
        first = next(iter(self.links_for(cheap)), None)
        return first is not None and first.local

    # -- building models (lazily, inside the worker, so a local start counts against the cut-off)
    def _chat_model(self, spec: LinkSpec) -> BaseChatModel:
        with self._lock:
            model = self._models.get(spec.name)
            building = self._building.setdefault(spec.name, threading.Lock())
        if model is not None:
            return model
        # Questions arriving together before the first build ended each built (imported) the SDK:
        # seconds of the interpreter lock apiece, while every other request waited (evals/results/burst.md).
        with building:
            with self._lock:
                model = self._models.get(spec.name)
            return model if model is not None else self._build(spec)

    def _build(self, spec: LinkSpec) -> BaseChatModel:
        base_url = spec.base_url
        if spec.local:
            if self._local is None:
                raise LinkError("no local model server was given to this chain")
            server = self._local()
            base_url = server.base_url
            spec = replace(spec, api_key=server.api_key)
        if spec.model is None:
            assert base_url is not None
            spec = replace(spec, model=_first_model(base_url, spec.api_key))
        model = make_chat_model(spec, base_url=base_url, temperature=self.settings.llm_temperature,
                                max_tokens=self.settings.llm_max_tokens)
        with self._lock:
            self.builds[spec.name] = self.builds.get(spec.name, 0) + 1
            return self._models.setdefault(spec.name, model)

    def prepare(self) -> None:
        """Build now every link's client that can be built without reaching a server (see
        `_prebuild`): the server calls it at start-up, so its first questions do not import SDKs."""
        for spec in self.specs:
            try:
                self._prebuild(spec)
            except Exception as exc:  # a link that cannot be built fails its calls later, with a reason
                log.warning("LLM link %s could not be built ahead: %s", spec.name, exc)

    def _prebuild(self, spec: LinkSpec) -> None:
        """Build a cloud link's client before its clock starts: importing an SDK is not the
        provider's latency. Links that must reach a server to be built (local start, vLLM model
        listing) are built inside the cut-off instead."""
        if not spec.local and spec.model is not None:
            self._chat_model(spec)

    def _runnable(self, spec: LinkSpec, schema: type[BaseModel] | None, token_probabilities: bool = False,
                  node: str | None = None) -> Runnable[LanguageModelInput, BaseMessage]:
        model = self._chat_model(spec)
        extra: dict[str, Any] = {}
        if node and spec.native_json_schema:  # our own servers (ChatOpenAI): which node asks
            extra["extra_headers"] = {NODE_HEADER: node}
        if schema is not None and spec.native_json_schema:
            extra["response_format"] = so.response_format(schema)
        if token_probabilities and spec.native_json_schema:  # the self-hosted OpenAI-style servers give them
            extra |= {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        return model.bind(**extra) if extra else model

    @staticmethod
    def _config(config: RunnableConfig | None, spec: LinkSpec) -> RunnableConfig:
        base = config or RunnableConfig()
        metadata = {**base.get("metadata", {}), "llm_link": spec.name}
        return {**base, "run_name": f"llm:{spec.name}", "metadata": metadata}

    @staticmethod
    def _check(message: BaseMessage, schema: type[BaseModel] | None) -> tuple[str, BaseModel | None]:
        reason = refusal_reason(message)
        if reason:
            raise LinkError(reason)
        text = _text(message).strip()
        if not text:
            raise LinkError("empty output")
        return text, (so.parse(text, schema) if schema is not None else None)

    # -- public API -----------------------------------------------------------------------
    def invoke(self, messages: LanguageModelInput, *, cheap: bool = False,
               structured: type[BaseModel] | None = None, token_probabilities: bool = False,
               config: RunnableConfig | None = None) -> ChainResult:
        """The first usable answer; raises AllLinksFailed when every link failed. `token_probabilities`:
        ask for each token's log-probability (ChainResult.token_logprobs) where the link gives them."""
        msgs = so.to_messages(messages)
        if structured is not None:
            msgs = so.with_instruction(msgs, structured)
        failures: list[LinkFailure] = []
        started = time.monotonic()
        for spec in self.links_for(cheap):
            t0 = time.monotonic()
            attempt = Attempt(spec.name, spec.model, spec.timeout_s, streamed=False)
            try:
                self._prebuild(spec)
                t0 = attempt.started = time.monotonic()  # the provider's own time, not our SDK import

                def call(spec: LinkSpec = spec) -> BaseMessage:
                    return self._runnable(spec, structured, token_probabilities, node_of(config)).invoke(
                        msgs, config=self._config(config, spec))

                message = run_with_cutoff(call, spec.timeout_s, spec.name, watch_of(config))
                text, parsed = self._check(message, structured)
            except Exception as exc:  # any failure moves to the next link
                failures.append(self._failed(spec, exc, t0))
                attempt.failed(exc, failures[-1].reason)
                continue
            attempt.ok(_model_name(message, spec), _usage(message))
            return ChainResult(text=text, provider=spec.name, model=_model_name(message, spec),
                               failures=failures, parsed=parsed, elapsed_s=time.monotonic() - started,
                               usage=_usage(message), token_logprobs=_token_logprobs(message))
        raise AllLinksFailed(failures)

    def stream(self, messages: LanguageModelInput, *, cheap: bool = False,
               config: RunnableConfig | None = None) -> Iterator[str | StreamReset | ChainResult]:
        """Text pieces as they arrive, then one ChainResult (its `text` is the whole answer).

        A link that fails before its first token hands over silently (it is in `failures`).
        A link that fails after sending tokens yields a StreamReset: discard what was shown, the
        next link starts from scratch. Raises AllLinksFailed when every link failed.
        """
        msgs = so.to_messages(messages)
        failures: list[LinkFailure] = []
        started = time.monotonic()
        for spec in self.links_for(cheap):
            t0 = time.monotonic()
            pieces: list[str] = []
            merged: AIMessageChunk | None = None
            attempt = Attempt(spec.name, spec.model, spec.timeout_s, streamed=True)
            try:
                self._prebuild(spec)
                t0 = attempt.started = time.monotonic()

                def chunks(spec: LinkSpec = spec) -> Iterator[Any]:
                    return self._runnable(spec, None, node=node_of(config)).stream(
                        msgs, config=self._config(config, spec))

                for chunk in stream_with_cutoff(chunks, spec.timeout_s, spec.name, watch_of(config)):
                    merged = chunk if merged is None else merged + chunk
                    piece = _text(chunk)
                    if piece:
                        pieces.append(piece)
                        yield piece
                final = AIMessage(content="".join(pieces),
                                  response_metadata=merged.response_metadata if merged else {},
                                  additional_kwargs=merged.additional_kwargs if merged else {})
                text, _ = self._check(final, None)
            except Exception as exc:  # any failure moves to the next link
                failure = self._failed(spec, exc, t0)
                failures.append(failure)
                attempt.failed(exc, failure.reason)
                if pieces:
                    yield StreamReset(spec.name, failure.reason)
                continue
            attempt.ok(_model_name(merged, spec) if merged else spec.name, _usage(merged) if merged else None)
            yield ChainResult(text=text, provider=spec.name,
                              model=_model_name(merged, spec) if merged else spec.name,
                              failures=failures, elapsed_s=time.monotonic() - started,
                              usage=_usage(merged) if merged else None)
            return
        raise AllLinksFailed(failures)

    @staticmethod
    def _failed(spec: LinkSpec, exc: BaseException, t0: float) -> LinkFailure:
        failure = LinkFailure(spec.name, describe(exc), time.monotonic() - t0)
        log.warning("LLM link %s failed after %.1fs: %s", spec.name, failure.elapsed_s, failure.reason)
        return failure
