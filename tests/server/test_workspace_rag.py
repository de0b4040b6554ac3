"""/rag and workspaces (issue 43): the workspace a run reads is never the client's to name. A
`workspace_id` in the config is refused (422) on invoke, batch (one config or one per input) and the
streams, identically for members, a stranger and an id nobody has, and no question is counted. A
member asks in the workspace with an API key bound to it: its runs read that workspace only (never
their personal copy of the same report), and once the member is removed the key asks nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.server.conftest import FACTS, follow_job, read_sse, signup, upload
from tests.server.test_keys import bearer, make_key
from tests.support.workspaces import QUESTION, add, make_workspace, upload_into

MISSING = 2**62  # an id no workspace has
ONE = {"question": QUESTION}


@pytest.fixture(scope="module")
def rag_team(live, report_pdf) -> dict[str, Any]:
    """A workspace with the report; two viewers, each holding a personal copy of it and a key bound to
    the workspace; a stranger."""
    with live.client() as c:
        owner = signup(c, "wr-owner")
        viewers = [signup(c, "wr-viewer") for _ in range(2)]
        stranger = signup(c, "wr-stranger")
        ws = make_workspace(c, owner, "rag-team")
        for v in viewers:
            assert add(c, owner, ws, v, "viewer").status_code == 201
        res = upload_into(c, owner, ws, report_pdf)
        assert res.status_code == 202, res.text
        assert follow_job(c, owner["headers"], res.json()["job_id"])[-1][0] == "done"
        personal, keys = [], []
        for v in viewers:
            mine = upload(c, v["headers"], "my-copy.pdf", report_pdf)
            assert mine.status_code == 202, mine.text
            assert follow_job(c, v["headers"], mine.json()["job_id"])[-1][0] == "done"
            personal.append(mine.json()["document_id"])
            keys.append(bearer(make_key(c, v, scopes=["read", "ask"], workspace_id=ws)))
    return {"ws": ws, "owner": owner, "viewers": viewers, "stranger": stranger,
            "document": res.json()["document_id"], "personal": personal, "keys": keys}


def _in(ws: int) -> dict[str, Any]:
    return {"configurable": {"workspace_id": ws}}


def _questions(db: Any, username: str) -> int:
    with db.connection() as conn:
        row = conn.execute("select count(*) from query_log q join users u on u.id = q.owner_id"
                           " where u.username = %s", (username,)).fetchone()
    return int(row[0]) if row else 0


def _answers(c: Any, headers: dict[str, str], ws: int) -> list[tuple[str, int, Any]]:
    """What each /rag route answers when the config names workspace `ws` (the value itself, which
    LangServe's 422 echoes, left out)."""
    out = []
    for path, body in [("/rag/invoke", {"input": ONE, "config": _in(ws)}),
                       ("/rag/batch", {"inputs": [ONE, ONE], "config": _in(ws)}),
                       ("/rag/batch", {"inputs": [ONE, ONE], "config": [{}, _in(ws)]}),  # one input's config
                       ("/rag/stream", {"input": ONE, "config": _in(ws)}),
                       ("/rag/stream_events", {"input": ONE, "config": _in(ws)})]:
        res = c.post(path, headers=headers, json=body)
        detail = res.json().get("detail")
        if isinstance(detail, list):
            detail = [{k: v for k, v in d.items() if k != "input"} for d in detail]
        out.append((path, res.status_code, detail))
    return out


def test_a_workspace_in_the_config_is_refused_alike_for_members_and_strangers(live, db, rag_team) -> None:
    ws = rag_team["ws"]
    askers = [rag_team["owner"], *rag_team["viewers"], rag_team["stranger"]]
    before = {a["username"]: _questions(db, a["username"]) for a in askers}
    with live.client() as c:
        baseline = _answers(c, rag_team["stranger"]["headers"], MISSING)
        assert [status for _, status, _ in baseline] == [422] * len(baseline), baseline
        assert all("workspace_id" in json.dumps(detail) for _, _, detail in baseline), baseline
        for asker in askers:  # the owner, both viewers and the stranger: one answer, nothing told
            assert _answers(c, asker["headers"], ws) == baseline, asker["username"]
        # a bound key may not name a workspace either, not even its own
        assert _answers(c, rag_team["keys"][0], ws) == baseline
    assert {a["username"]: _questions(db, a["username"]) for a in askers} == before  # none counted


def test_members_ask_in_the_workspace_with_a_key_bound_to_it(live, rag_team) -> None:
    document = rag_team["document"]
    with live.client() as c:
        for viewer, own, key in zip(rag_team["viewers"], rag_team["personal"], rag_team["keys"], strict=True):
            everywhere = c.post("/rag/invoke", headers=viewer["headers"], json={"input": ONE})
            assert everywhere.status_code == 200, everywhere.text
            assert own in {x["document_id"] for x in everywhere.json()["output"]["citations"]}
            res = c.post("/rag/invoke", headers=key, json={"input": ONE})
            assert res.status_code == 200, res.text
            assert FACTS["revenue"] in res.json()["output"]["answer"]
            assert {x["document_id"] for x in res.json()["output"]["citations"]} == {document}
            batch = c.post("/rag/batch", headers=key, json={"inputs": [ONE, ONE], "config": [{}, {}]})
            assert batch.status_code == 200, batch.text
            assert [{x["document_id"] for x in o["citations"]} for o in batch.json()["output"]] == [{document}] * 2
            with c.stream("POST", "/rag/stream", headers=key, json={"input": ONE}) as streamed:
                assert streamed.status_code == 200
                events = read_sse(streamed)
            assert events[-1][0] == "end"
            sent = json.dumps([d for n, d in events if n == "data"])
            assert FACTS["revenue"] in sent and own not in sent


def test_a_removed_member_s_bound_key_asks_nothing(live, rag_team) -> None:
    ws, owner = rag_team["ws"], rag_team["owner"]
    with live.client() as c:
        late = signup(c, "wr-late")
        assert add(c, owner, ws, late, "viewer").status_code == 201
        key = bearer(make_key(c, late, scopes=["read", "ask"], workspace_id=ws))
        res = c.post("/rag/invoke", headers=key, json={"input": ONE})
        assert res.status_code == 200 and res.json()["output"]["citations"], res.text
        assert c.delete(f"/api/workspaces/{ws}/members/{late['username']}", headers=owner["headers"]).status_code == 204
        for path, body in [("/rag/invoke", {"input": ONE}), ("/rag/batch", {"inputs": [ONE]}),
                           ("/rag/stream", {"input": ONE})]:
            assert c.post(path, headers=key, json=body).status_code == 401, path
        # their session still asks, over what they read now: nothing of the workspace
        res = c.post("/rag/invoke", headers=late["headers"], json={"input": ONE})
        assert res.status_code == 200 and rag_team["document"] not in res.text
