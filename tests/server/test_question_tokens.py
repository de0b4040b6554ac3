"""Issue 41, the attack suite's question cost: a 4,000-character question cost 7 to 18 times a short
one to answer, and a /rag history of long turns more, but the per-user budget counted questions.
Now each question also costs its tokens (question and the history the model sees, estimated at 4
characters a token: answering/accounting.py `cost`), summed per rolling minute and hour
(QUESTION_TOKENS_PER_MINUTE, QUESTION_TOKENS_PER_HOUR) over every surface. Before, every request
here but the last was answered."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import signup

LONG = "What did Aurora Widgets report about revenue? " * 86  # 3,956 characters: about 990 tokens
SHORT = "What was the revenue?"


@pytest.fixture(scope="module")
def thrifty(start_server, server_settings):
    return start_server(server_settings.model_copy(update={"question_tokens_per_hour": 2_500,
                                                           "question_tokens_per_minute": 10_000}))


def mcp_ask(c: Any, headers: dict[str, str], question: str) -> dict[str, Any]:
    res = c.post("/mcp", headers={**headers, "Accept": "application/json, text/event-stream"},
                 json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "ask", "arguments": {"question": question}}})
    assert res.status_code == 200, res.text
    return dict(res.json()["result"])


def test_long_questions_spend_the_token_budget_on_every_surface_short_ones_still_fit(thrifty, db) -> None:
    with thrifty.client() as c:
        user = signup(c, "tokens")
        h = user["headers"]
        for _ in range(2):  # two long questions: about 1,980 of the hour's 2,500 tokens
            res = c.post("/rag/invoke", headers=h, json={"input": {"question": LONG}})
            assert res.status_code == 200, res.text
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": LONG}})  # a third does not fit
        assert res.status_code == 429 and int(res.headers["Retry-After"]) >= 1, res.text
        assert "token" in res.json()["detail"], res.text
        # the same budget on every surface: /v1, a chat, MCP's ask
        v1 = c.post("/v1/chat/completions", headers=h,
                    json={"model": "thotqen", "messages": [{"role": "user", "content": LONG}]})
        assert v1.status_code == 429, v1.text
        chat = c.post("/api/chats", headers=h, json={"title": "tokens"}).json()["id"]
        asked = c.post(f"/api/chats/{chat}/messages", headers=h, json={"question": LONG})
        assert asked.status_code == 429, asked.text
        refused = mcp_ask(c, h, LONG)
        assert refused["isError"] and "token" in refused["content"][0]["text"], refused
        # counted in tokens, not questions: a short question still fits
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": SHORT}})
        assert res.status_code == 200, res.text
        owner = c.get("/api/auth/me", headers=h).json()["id"]
    with db.connection() as conn:
        costs = [r[0] for r in conn.execute("select prompt_tokens from query_log where owner_id = %s order by id",
                                            (owner,)).fetchall()]
    assert costs[:2] == [989, 989] and costs[2] == 6, costs  # the refused ones were never counted


def test_a_long_history_counts_what_the_model_sees_and_one_past_the_budget_never_fits(thrifty) -> None:
    turns = [{"role": role, "content": "x" * 8_000} for _ in range(10) for role in ("user", "assistant")]
    with thrifty.client() as c:
        h = signup(c, "history")["headers"]
        # six turns of 8,000 characters seen (GRAPH_HISTORY_TURNS 3): 12,000 tokens, past the hour's 2,500
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": SHORT, "chat_history": turns}})
        assert res.status_code == 429 and "shorten" in res.json()["detail"], res.text
        # the model sees no turn when the request asks for none: the same history costs nothing then
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": SHORT, "chat_history": turns},
                                                     "config": {"configurable": {"history_turns": 0}}})
        assert res.status_code == 200, res.text
