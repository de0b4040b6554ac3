"""The app's edge: every request body is bounded in size, nesting and read time before any route,
authentication included, sees it.

A multipart form (an upload) may be as large as UPLOAD_MAX_MB plus the form's own overhead and is
counted as it streams (api/routes/documents.py refuses it precisely, at the file's size); any other body
is read here in full, up to REQUEST_MAX_KB on the routes that carry a conversation
(`CONVERSATION_PATHS`: /rag's batch of questions with their earlier turns, /v1's messages) and
FORM_MAX_KB on every other (the largest they hold, a question with its scope, is tens of
kilobytes: a megabyte there was only ever an attacker's, decoded on the event loop), and its JSON
nesting (JSON_MAX_DEPTH) and number of arrays and objects (JSON_MAX_CONTAINERS on the conversation
routes, FORM_MAX_CONTAINERS on every other) and numbers' digits (NUMBER_MAX_DIGITS: past
Python's int-string limit json.loads raises a ValueError no parser catches) checked before the
route parses it, so neither the JSON decoder, LangServe nor the validation-error handler ever
recurses over a hostile input, and parsing one costs the event loop little: the decoder builds
each array and object on the loop, about a quarter of a second per megabyte of empty ones, which a
few such bodies at once made every other request wait for (evals/results/burst_kind_json.md). A
Content-Length over the cap answers 413 without reading a byte; a body that stops arriving for
BODY_READ_TIMEOUT_S answers 408.

The conversation routes' bodies past FORM_MAX_KB (a megabyte of JSON each, which LangServe decodes
on the event loop before any question is admitted) are also a rate per account:
LARGE_BODIES_PER_MINUTE, checked as soon as a body is known to pass FORM_MAX_KB (by its
Content-Length, before a byte is read, or as it streams) from the request's access token (its
signature checked on the loop, api/verify.py; a Supabase token counts by itself); without a valid
token such a body answers 401, past the rate 429 with Retry-After, and is never read.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from langserve.lzstring import LZString
from starlette.requests import Request
from starlette.responses import JSONResponse

from api import scopes
from api.deps import ACCESS_COOKIE
from api.limits import Rate
from api.verify import Verifier
from identity.security import AuthError

MULTIPART_OVERHEAD = 64 * 1024  # boundaries, part headers and small fields on top of the file
CONVERSATION_PATHS = ("/rag/", "/v1/")  # their bodies may be REQUEST_MAX_KB; every other FORM_MAX_KB
# A JSON string (escapes included): its brackets are text, not nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Python's int() refuses a string of more than 4300 digits (sys.get_int_max_str_digits) with a
# ValueError that no route catches: json.loads raises it from deep inside FastAPI's and LangServe's
# body parsing (500, or a reset /rag/stream). No real field needs a number a hundred digits long.
NUMBER_MAX_DIGITS = 100
_LONG_NUMBER = re.compile(rb"(?<![0-9])[0-9]{%d}" % (NUMBER_MAX_DIGITS + 1))  # from a run's start only: linear
# LangServe's /rag/c/{config_hash}/... routes: the hash is an LZString of the run's config, which
# LangServe decompresses (pure Python, its output up to quadratic in the hash) and parses before
# anything of ours runs: a 60 KB hash held the event loop 3-4 s and a gigabyte. The playground's
# hashes, the whole served config included, are about 420 characters (at most 4 ms of decompressing here).
CONFIG_HASH = re.compile(r"/rag/c/([^/]*)(?:/|$)")
CONFIG_HASH_MAX_CHARS = 1024


class BodyRefused(Exception):
    """Raised from a route's receive when the streamed body passes its cap or stalls (status, message)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def shape(body: bytes) -> tuple[int, int]:
    """(the deepest its arrays and objects nest, how many it has) of JSON text, strings' brackets
    ignored. Linear in the body, bounded by the body cap; malformed text is judged by its brackets alone."""
    return _shape(_STRING.sub(b"", body))


def json_problem(body: bytes, depth: int, containers: int) -> str | None:
    """Why JSON text (a body, a decompressed config hash) is refused before any parser sees it: it
    nests deeper than `depth`, holds more than `containers` arrays and objects, or a number of more
    than NUMBER_MAX_DIGITS digits; None when it is within every bound. Linear in the text."""
    bare = _STRING.sub(b"", body)  # what is left outside strings: brackets, numbers, literals
    nesting, count = _shape(bare)
    if nesting > depth:
        return f"the JSON body nests deeper than {depth} levels"
    if count > containers:
        return f"the JSON body has more than {containers} arrays and objects"
    if _LONG_NUMBER.search(bare):
        return f"the JSON body has a number of more than {NUMBER_MAX_DIGITS} digits"
    return None


def _shape(bare: bytes) -> tuple[int, int]:
    brackets = bare.translate(None, _NOT_BRACKETS)
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

    def __init__(self, app: Any, *, body_max_bytes: int, upload_max_bytes: int, json_max_depth: int,
                 read_timeout_s: float, json_max_containers: int, form_max_bytes: int | None = None,
                 large_per_minute: int = 0, verifier: Callable[[], Verifier | None] | None = None,
                 form_max_containers: int | None = None) -> None:
        self.app = app
        self.containers = json_max_containers
        self.form_containers = min(json_max_containers, form_max_containers or json_max_containers)
        self.body_max = body_max_bytes
        self.form_max = min(body_max_bytes, form_max_bytes if form_max_bytes is not None else body_max_bytes)
        self.upload_max = upload_max_bytes + MULTIPART_OVERHEAD
        self.depth = json_max_depth
        self.timeout = read_timeout_s
        # bodies past form_max on the conversation routes, per account (0: not limited)
        self.large = Rate(large_per_minute) if large_per_minute and verifier is not None else None
        self.verifier = verifier

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if (hashed := self._config_hash(scope["path"])) is not None:
            await self._refuse(scope, send, *hashed)
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
        large = self.large is not None and scope["path"].startswith(CONVERSATION_PATHS)
        try:
            if large and length is not None and length > self.form_max:
                await self._count_large(scope)  # before a byte of it is read
                large = False
            body, ended = await self._read(receive, cap, (lambda: self._count_large(scope)) if large else None)
        except BodyRefused as exc:
            await self._refuse(scope, send, exc.status, exc.detail, exc.headers)
            return
        most = self.containers if scope["path"].startswith(CONVERSATION_PATHS) else self.form_containers
        problem = json_problem(body, self.depth, most) if body else None
        if problem is not None:
            await self._refuse(scope, send, 400, problem)
            return
        await self.app(scope, self._replay(body, ended, receive), send)

    def _config_hash(self, path: str) -> tuple[int, str] | None:
        """(status, message) refusing a LangServe config hash in `path` that is too long, or whose
        config (decompressed here, its cost bounded by the hash's length) is past a body's bounds."""
        found = CONFIG_HASH.match(path)
        if found is None:
            return None
        given = found.group(1)
        if len(given) > CONFIG_HASH_MAX_CHARS:
            return 414, f"the config hash is longer than {CONFIG_HASH_MAX_CHARS} characters"
        try:
            text = LZString.decompressFromEncodedURIComponent(given) if given else ""  # type: ignore[no-untyped-call]
        except Exception:  # malformed: LangServe answers 400 "Invalid config hash" itself
            return None
        if not isinstance(text, str) or not text:
            return None
        config = text.encode("utf-8", "surrogatepass")
        if len(config) > self.form_max:
            return 400, f"the config hash holds more than {self.form_max // 1024} KB"
        problem = json_problem(config, self.depth, self.form_containers)
        return (400, problem.replace("JSON body", "config hash's JSON")) if problem else None

    def _body_cap(self, path: str) -> int:
        return self.body_max if path.startswith(CONVERSATION_PATHS) else self.form_max

    def _too_large(self, multipart: bool, cap: int) -> str:
        if multipart:
            return f"the upload is larger than {(self.upload_max - MULTIPART_OVERHEAD) / 1048576:g} MB"
        return f"the request body is larger than {cap // 1024} KB"

    async def _next(self, receive: Any) -> dict[str, Any]:
        try:
            message: dict[str, Any] = await asyncio.wait_for(receive(), self.timeout)
        except TimeoutError:
            raise BodyRefused(408, f"the request body stopped arriving for {self.timeout:g} s") from None
        return message

    async def _count_large(self, scope: dict[str, Any]) -> None:
        """Count a body past FORM_MAX_KB against its account's LARGE_BODIES_PER_MINUTE (BodyRefused:
        401 without a valid token, 429 past the rate)."""
        assert self.large is not None and self.verifier is not None
        verifier = self.verifier()
        if verifier is None:  # not started yet: nothing is served either
            return
        request = Request(scope)
        scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else request.cookies.get(ACCESS_COOKIE, "")
        kb = self.form_max // 1024
        try:
            if token and scopes.is_key(token):  # an API key counts against its owner, like their tokens
                key: str | None = f"user:{(await verifier.key_user(token)).id}"
            else:
                claims = verifier.claims(token) if token else None
                key = f"user:{claims['sub']}" if claims is not None else f"token:{hash(token)}" if token else None
        except AuthError:
            key = None
        if key is None:
            raise BodyRefused(401, f"a request body larger than {kb} KB needs a valid access token")
        wait = self.large.take(key)
        if wait:
            raise BodyRefused(429, f"at most {self.large.limit} request bodies larger than {kb} KB a minute per "
                                   f"account; try again later", {"Retry-After": str(max(1, math.ceil(wait)))})

    async def _read(self, receive: Any, cap: int,
                    past_form: Callable[[], Awaitable[None]] | None = None) -> tuple[bytes, dict[str, Any] | None]:
        """The whole body, or the disconnect that cut it short (handed on for the route to see);
        `past_form` is called once the body passes FORM_MAX_KB."""
        body = bytearray()
        while True:
            message = await self._next(receive)
            if message["type"] != "http.request":
                return bytes(body), message
            body += message.get("body", b"")
            if len(body) > cap:
                raise BodyRefused(413, self._too_large(False, cap))
            if past_form is not None and len(body) > self.form_max:
                await past_form()
                past_form = None
            if not message.get("more_body", False):
                return bytes(body), None

    def _counted(self, receive: Any, cap: int) -> Any:
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
    def _replay(body: bytes, ended: dict[str, Any] | None, receive: Any) -> Any:
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
    async def _refuse(scope: dict[str, Any], send: Any, status: int, detail: str,
                      headers: dict[str, str] | None = None) -> None:
        # the connection closes after a refusal: the rest of the body is never read
        response = JSONResponse({"detail": detail}, status_code=status, headers={**(headers or {}),
                                                                                 "Connection": "close"})

        async def nothing() -> dict[str, Any]:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)
