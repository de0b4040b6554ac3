"""langgraph.json's auth handler: a LangGraph server takes the user from a verified token, never the caller."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph_sdk import Auth

from api.langgraph_auth import make_auth
from graph.context import Context, context_of
from graph.stream import run_context

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def handler(runtime) -> Auth:
    """The handler over the test runtime's token verifier and database, as studio.py builds it over its own."""
    return make_auth(lambda: (runtime.tokens, runtime.database))


@pytest.fixture
def issued(runtime, db, make_user):
    from identity.security import User

    name, user_id = make_user("lg")
    with db.connection() as conn:
        return User(user_id, name), runtime.tokens.issue(conn, User(user_id, name))


def test_langgraph_json_names_the_handler_and_no_studio_bypass() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["auth"] == {"path": "./studio.py:auth", "disable_studio_auth": True}
    from studio import auth

    assert isinstance(auth, Auth)


def test_a_verified_token_becomes_the_runs_user(handler, issued, db) -> None:
    from storage import accounts

    authenticate = handler._authenticate_handler
    user, tokens = issued
    out = asyncio.run(authenticate(f"Bearer {tokens['access_token']}"))
    assert out["identity"] == str(user.id) and out["owner_id"] == user.id and "thotqen:user" in out["permissions"]
    for bad in (None, "", "Bearer", "Basic abc", "Bearer not-a-token", f"Bearer {tokens['refresh_token']}"):
        with pytest.raises(Auth.exceptions.HTTPException) as caught:
            asyncio.run(authenticate(bad))
        assert caught.value.status_code == 401
    with db.connection() as conn:
        accounts.revoke_tokens(conn, user_id=user.id)
    with pytest.raises(Auth.exceptions.HTTPException, match="revoked"):
        asyncio.run(authenticate(f"Bearer {tokens['access_token']}"))


def test_the_graph_takes_the_owner_from_the_verified_user_not_the_caller(runtime) -> None:
    def context(configurable: dict) -> Context:  # what a node reads when LangGraph's server runs it
        config = RunnableConfig(configurable=configurable)
        return context_of(Runtime(context=run_context(runtime, config)), config)

    verified = {"identity": "7", "owner_id": 7, "display_name": "alice", "permissions": ["thotqen:user"]}
    cfg = context({"owner_id": 1, "user": "root-admin", "langgraph_auth_user": verified})
    assert (cfg.owner_id, cfg.user) == (7, "alice")
    # Studio's local identity under `langgraph dev` is not a verified Thotqen user: the caller's values stay
    studio = {"identity": "langgraph-studio-user", "permissions": []}
    cfg = context({"user": "bob", "langgraph_auth_user": studio})
    assert cfg.user == "bob" and cfg.owner_id is None


def test_crons_store_and_assistant_writes_are_refused() -> None:
    from api.langgraph_auth import not_offered
    from studio import auth  # the handler langgraph.json serves

    for key in [("crons", "*"), ("store", "*"), ("assistants", "create"), ("assistants", "update"),
                ("assistants", "delete")]:
        assert auth._handlers[key][-1] is not_offered
    assert asyncio.run(not_offered(None, {})) is False
