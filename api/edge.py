"""The app's edge: every request body is bounded in size, nesting and read time before any route,
authentication included, sees it.

A multipart form (an upload) may be as large as UPLOAD_MAX_MB plus the form's own overhead and is
counted as it streams (api/documents.py refuses it precisely, at the file's size); any other body
is read here in full, up to REQUEST_MAX_KB on the routes that carry a conversation
(`CONVERSATION_PATHS`: /rag's batch of questions with their earlier turns, /v1's messages) and
FORM_MAX_KB on every other (the largest they hold, a question with its scope, is tens of
kilobytes: a megabyte there was only ever an attacker's, decoded on the event loop), and its JSON
nesting (JSON_MAX_DEPTH) and number of arrays and objects (JSON_MAX_CONTAINERS) checked before the
route parses it, so neither the JSON decoder, LangServe nor the validation-error handler ever
recurses over a hostile input, and parsing one costs the event loop little: the decoder builds
each array and object on the loop, about a quarter of a second per megabyte of empty ones, which a
few such bodies at once made every other request wait for (evals/results/burst_kind_json.md). A
Content-Length over the cap answers 413 without reading a byte; a body that stops arriving for
BODY_READ_TIMEOUT_S answers 408.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import numpy as np
from starlette.responses import JSONResponse

MULTIPART_OVERHEAD = 64 * 1024  # boundaries, part headers and small fields on top of the file
CONVERSATION_PATHS = ("/rag/", "/v1/")  # their bodies may be REQUEST_MAX_KB; every other FORM_MAX_KB
# A JSON string (escapes included): its brackets are text, not nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")



class BodyRefused(Exception):
    """Raised from a route's receive when the streamed body passes its cap or stalls (status, message)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def shape(body: bytes) -> tuple[int, int]:
    """(the deepest its arrays and objects nest, how many it has) of JSON text, strings' brackets
    ignored. Linear in the body, bounded by the body cap; malformed text is judged by its brackets alone."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0, 0
    # the running depth after each bracket, in C: a Python loop over a body of a million brackets
    # held the event loop (every other request) for tens of milliseconds
    codes = np.frombuffer(brackets, dtype=np.uint8)
    opens = (codes == 0x5B) | (codes == 0x7B)  # [ {
    return int(np.cumsum(opens.astype(np.int32) * 2 - 1, dtype=np.int32).max()), int(opens.sum())



# RFC 2046 5.1.1: 1 to 70 characters of this set, not ending in a space.
_BOUNDARY = re.compile(rb'[0-9A-Za-z\'()+_,./:=? -]{0,69}[0-9A-Za-z\'()+_,./:=?-]')


def _multipart(scope: dict[str, Any]) -> tuple[bool, bool]:
    """(whether the body is a multipart form, whether its boundary is one RFC 2046 allows)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            kind, _, params = value.partition(b";")
            if kind.strip().lower() != b"multipart/form-data":
                return False, True
            boundary = next((v.strip() for k, _, v in (p.partition(b"=") for p in params.split(b";"))
                             if k.strip().lower() == b"boundary"), b"")
            if boundary[:1] == b'"' and boundary[-1:] == b'"' and len(boundary) >= 2:
                boundary = boundary[1:-1]
            return True, _BOUNDARY.fullmatch(boundary) is not None
    return False, True


def _content_length(scope: dict[str, Any]) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class BodyLimits:
    """ASGI middleware bounding every HTTP request body (see the module's docstring)."""

    def __init__(self, app: Any, *, body_max_bytes: int, upload_max_bytes: int, json_max_depth: int,  # noqa: ANN401
                 read_timeout_s: float, json_max_containers: int, form_max_bytes: int | None = None) -> None:
        self.app = app
        self.containers = json_max_containers
        self.body_max = body_max_bytes
        self.form_max = min(body_max_bytes, form_max_bytes if form_max_bytes is not None else body_max_bytes)
        self.upload_max = upload_max_bytes + MULTIPART_OVERHEAD
        self.depth = json_max_depth
        self.timeout = read_timeout_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:  # noqa: ANN401
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        multipart, boundary_ok = _multipart(scope)
        if not boundary_ok:
            await self._refuse(scope, send, 400, "a multipart body needs a boundary of 1 to 70 characters "
                                                 "(RFC 2046)")
            return
        cap = self.upload_max if multipart else self._body_cap(scope["path"])
        length = _content_length(scope)
        if length is not None and length > cap:
            await self._refuse(scope, send, 413, self._too_large(multipart, cap))
            return
        if multipart:
            await self.app(scope, self._counted(receive, cap), send)
            return
        try:
            body, ended = await self._read(receive, cap)
        except BodyRefused as exc:
            await self._refuse(scope, send, exc.status, exc.detail)
            return
        depth, containers = shape(body) if body else (0, 0)
        if depth > self.depth:
            await self._refuse(scope, send, 400, f"the JSON body nests deeper than {self.depth} levels")
            return
        if containers > self.containers:
            await self._refuse(scope, send, 400, f"the JSON body has more than {self.containers} arrays and "
                                                 "objects")
            return
        await self.app(scope, self._replay(body, ended, receive), send)

    def _body_cap(self, path: str) -> int:
        return self.body_max if path.startswith(CONVERSATION_PATHS) else self.form_max

    def _too_large(self, multipart: bool, cap: int) -> str:
        if multipart:
            return f"the upload is larger than {(self.upload_max - MULTIPART_OVERHEAD) / 1048576:g} MB"
        return f"the request body is larger than {cap // 1024} KB"

    async def _next(self, receive: Any) -> dict[str, Any]:  # noqa: ANN401
        try:
            message: dict[str, Any] = await asyncio.wait_for(receive(), self.timeout)
        except TimeoutError:
            raise BodyRefused(408, f"the request body stopped arriving for {self.timeout:g} s") from None
        return message

    async def _read(self, receive: Any, cap: int) -> tuple[bytes, dict[str, Any] | None]:  # noqa: ANN401
        """The whole body, or the disconnect that cut it short (handed on for the route to see)."""
        body = bytearray()
        while True:
            message = await self._next(receive)
            if message["type"] != "http.request":
                return bytes(body), message
            body += message.get("body", b"")
            if len(body) > cap:
                raise BodyRefused(413, self._too_large(False, cap))
            if not message.get("more_body", False):
                return bytes(body), None

    def _counted(self, receive: Any, cap: int) -> Any:  # noqa: ANN401
        received = 0
        done = False

        async def counted() -> dict[str, Any]:
            nonlocal received, done
            if done:  # the body is in: what is left is waiting for a disconnect, unbounded in time
                message: dict[str, Any] = await receive()
                return message
            message = await self._next(receive)
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyRefused(413, self._too_large(True, cap))
                done = not message.get("more_body", False)
            return message

        return counted

    @staticmethod
    def _replay(body: bytes, ended: dict[str, Any] | None, receive: Any) -> Any:  # noqa: ANN401
        pending: list[dict[str, Any]] = [{"type": "http.request", "body": body, "more_body": False}]
        if ended is not None:
            pending = [ended]

        async def replay() -> dict[str, Any]:
            if pending:
                return pending.pop()
            message: dict[str, Any] = await receive()
            return message

        return replay

    @staticmethod
    async def _refuse(scope: dict[str, Any], send: Any, status: int, detail: str) -> None:  # noqa: ANN401
        # the connection closes after a refusal: the rest of the body is never read
        response = JSONResponse({"detail": detail}, status_code=status, headers={"Connection": "close"})

        async def nothing() -> dict[str, Any]:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)
