"""A request whose client left is cancelled, so the answer it waits for stops too (issue 41).

A streamed response notices a client that left when it next writes (sse-starlette and Starlette
also watch for the disconnect), but a route that answers once, at the end (`/rag/invoke`,
`/rag/batch`, `/v1/chat/completions` without `stream`, MCP's `ask`), awaits its answer with
nothing listening: uvicorn does not cancel the app when the connection closes, so a dropped
`/rag/invoke` ran its answer to the end for nobody. Here, on the answering routes, the app runs in
a task of its own while this middleware reads the connection's messages for it (the body is handed
on as it comes); an `http.disconnect` before the response has ended cancels that task, and its
answer with it (answering/processes.py: the run in the answer process is cancelled; in a thread,
`answering.bridge` tells the thread that its caller left). The query-log row ends `cancelled`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

ANSWERING = ("/rag/", "/v1/chat/completions", "/mcp")


def answering(scope: dict[str, Any]) -> bool:
    return scope["type"] == "http" and scope.get("method") == "POST" and str(scope["path"]).startswith(ANSWERING)


class CancelWhenClientLeaves:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not answering(scope):
            await self.app(scope, receive, send)
            return
        messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        ended = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal ended
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True
            await send(message)

        async def pump() -> None:
            while True:
                message = await receive()
                await messages.put(message)
                if message["type"] == "http.disconnect":
                    return

        app = asyncio.ensure_future(self.app(scope, messages.get, sending))
        reader = asyncio.ensure_future(pump())
        try:
            await asyncio.wait({app, reader}, return_when=asyncio.FIRST_COMPLETED)
            if not app.done() and not ended:  # the client left mid-answer: nobody waits for it
                app.cancel()
            await asyncio.wait({app})
        finally:
            for task in (app, reader):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if not app.cancelled():
            app.result()  # the app's own exception, as uvicorn would have had it
