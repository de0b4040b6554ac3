"""The graph over LangServe at /rag: auth, identity from the token, bounded per-request config."""

from __future__ import annotations

import json

import pytest

from graph import prompts
from tests.server.conftest import FACTS, read_sse, signup

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def test_invoke_answers_from_the_callers_documents(live, owner_with_report) -> None:
    with live.client() as c:
        res = c.post("/rag/invoke", headers=owner_with_report["headers"],
                     json={"input": {"question": QUESTION},
                           "config": {"configurable": {"top_k": 2, "hyde": False, "heading_weight": 0.5,
                                                       "distinct_pages": True}}})
        assert res.status_code == 200, res.text
        out = res.json()["output"]
        assert FACTS["revenue"] in out["answer"] and out["provider"] == "vllm"
        assert "hyde" not in out["route"]  # the per-request switch reached the graph
        assert len(out["citations"]) <= 2
        assert {c_["document_id"] for c_ in out["citations"]} == {owner_with_report["document_id"]}


def test_identity_comes_from_the_token_not_the_body(live, owner_with_report) -> None:
    with live.client() as c:
        stranger = signup(c, "stranger")
        # naming the owner's document in the input finds nothing: retrieval is scoped by the token's user
        res = c.post("/rag/invoke", headers=stranger["headers"],
                     json={"input": {"question": QUESTION, "document_ids": [owner_with_report["document_id"]]}})
        assert res.status_code == 200, res.text
        out = res.json()["output"]
        assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
        # and a user id in the config is refused outright
        for key, value in [("owner_id", 1), ("user", owner_with_report["username"])]:
            res = c.post("/rag/invoke", headers=stranger["headers"],
                         json={"input": {"question": QUESTION}, "config": {"configurable": {key: value}}})
            assert res.status_code == 422, res.text


@pytest.mark.parametrize("configurable", [{"top_k": 1000}, {"retrieve_k": 0}, {"dense_weight": -1},
                                          {"heading_weight": 11},
                                          {"hyde": "maybe"}, {"distinct_pages": "sometimes"},
                                          {"screen_chunks": False}, {"llm_order": "local"}])
def test_out_of_bounds_config_is_rejected(live, configurable) -> None:
    with live.client() as c:
        user = signup(c, "bounds")
        res = c.post("/rag/invoke", headers=user["headers"],
                     json={"input": {"question": QUESTION}, "config": {"configurable": configurable}})
        assert res.status_code == 422, res.text


@pytest.mark.parametrize("method,path", [("POST", "/rag/invoke"), ("POST", "/rag/batch"), ("POST", "/rag/stream"),
                                         ("POST", "/rag/stream_events"), ("GET", "/rag/input_schema"),
                                         ("GET", "/rag/output_schema"), ("GET", "/rag/config_schema"),
                                         ("GET", "/rag/playground/index.html")])
def test_every_rag_route_needs_a_token(live, method, path) -> None:
    with live.client() as c:
        body = {"input": {"question": QUESTION}} if method == "POST" else None
        res = c.request(method, path, json=body)
        assert res.status_code == 401, (path, res.status_code)
        res = c.request(method, path, json=body, headers={"Authorization": "Bearer not-a-token"})
        assert res.status_code == 401


def test_schemas_stream_batch_and_events(live, owner_with_report) -> None:
    h = owner_with_report["headers"]
    with live.client() as c:
        schema = json.dumps(c.get("/rag/input_schema", headers=h).json())
        assert '"question"' in schema and '"document_ids"' in schema and "owner_id" not in schema
        assert '"answer"' in json.dumps(c.get("/rag/output_schema", headers=h).json())
        config_schema = json.dumps(c.get("/rag/config_schema", headers=h).json())
        assert "top_k" in config_schema and "owner_id" not in config_schema and "llm_order" not in config_schema
        assert c.get("/rag/playground/index.html", headers=h).status_code == 200

        batch = c.post("/rag/batch", headers=h, json={"inputs": [{"question": QUESTION},
                                                                 {"question": "How much was the quarterly dividend?"}]})
        assert batch.status_code == 200, batch.text
        outputs = batch.json()["output"]
        assert FACTS["revenue"] in outputs[0]["answer"] and FACTS["dividend"] in outputs[1]["answer"]

        with c.stream("POST", "/rag/stream", headers=h, json={"input": {"question": QUESTION}}) as res:
            assert res.status_code == 200
            events = read_sse(res)
        names = [n for n, _ in events]
        assert names[-1] == "end" and "data" in names
        # the graph streams its node updates; the generate step carries the answer
        assert any(FACTS["revenue"] in json.dumps(d) for n, d in events if n == "data")

        with c.stream("POST", "/rag/stream_events", headers=h, json={"input": {"question": QUESTION}}) as res:
            assert res.status_code == 200
            events = read_sse(res)
        kinds = {d.get("event") for n, d in events if n == "data"}
        assert {"on_chain_start", "on_chain_end"} <= kinds
        nodes = {d.get("name") for n, d in events if n == "data" and d.get("event") == "on_chain_start"}
        assert {"guardrail", "retrieve", "generate"} <= nodes


def test_the_streams_show_nothing_the_check_has_not_passed(live, owner_with_report) -> None:
    """The model's draft (a figure no excerpt holds) is withheld by verify: none of /rag's three streams
    shows it, as a node's update, a model's tokens or a state handed to the next node (issue 39, item 5).
    Only the check's report (`verification`, as in the final state) names what it withheld and why."""
    draft = "987 million"
    question = {"input": {"question": "How much did Aurora Widgets pay its auditors in fiscal 2023?"}}
    with live.client() as c:
        h = owner_with_report["headers"]
        final = c.post("/rag/invoke", headers=h, json=question).json()["output"]
        assert draft not in final["answer"] and final["citations"] == []  # the check refused it
        for path in ("/rag/stream", "/rag/stream_log", "/rag/stream_events"):
            with c.stream("POST", path, headers=h, json=question) as res:
                assert res.status_code == 200
                events = read_sse(res)
            assert events[-1][0] == "end" and len(events) > 3, path
            shown = json.dumps(without_report([d for n, d in events if n == "data"]))
            assert draft not in shown, path
            assert "verify" in shown and "I cannot answer" in shown, path  # the checked answer is there


def without_report(value: object) -> object:
    """`value` without the check's reports (`verification`: the draft it withheld, and why)."""
    if isinstance(value, dict):
        return {k: without_report(v) for k, v in value.items() if k != "verification"}
    if isinstance(value, list):
        return [without_report(v) for v in value]
    return value
