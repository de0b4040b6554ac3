"""One configuration object, read from the RunnableConfig in every node.

Its knobs are the ones declared in tunables.py; their values come from the environment
(settings), and a run overrides any of them through `config["configurable"]` (Studio's form,
LangServe's config, tests). Objects that cannot travel as JSON (a test's scripted chat model, a
database) go in `configurable["services"]` (graph/services.py).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict

from tunables import ServerTunables, Tunables


class Configuration(Tunables, ServerTunables):
    model_config = ConfigDict(extra="ignore")

    # who is asking: the server sets this from auth; the CLI from --user
    user: str = "local"
    owner_id: int | None = None
    # providers: "" keeps LLM_ORDER from the environment
    llm_order: str = ""

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        from settings import get_settings

        settings = get_settings()
        values: dict[str, Any] = settings.model_dump(include=set(Tunables.model_fields) | set(
            ServerTunables.model_fields))
        values["user"] = settings.default_user
        configurable = (config or {}).get("configurable") or {}
        values.update({k: v for k, v in configurable.items() if k in cls.model_fields and v is not None})
        verified = platform_user(configurable)
        if verified is not None:  # a LangGraph server verified the token: the caller's owner/user do not count
            values["owner_id"], values["user"] = verified
        return cls.model_validate(values)


def platform_user(configurable: dict[str, Any]) -> tuple[int, str] | None:
    """(owner id, name) of the user a LangGraph server verified with api/langgraph_auth.py, if any.
    Other identities (Studio's local one under `langgraph dev`) are not ours: None."""
    user = configurable.get("langgraph_auth_user")
    if user is None:
        return None
    try:
        if "thotqen:user" not in list(user["permissions"]):
            return None
        return int(user["owner_id"]), str(user["display_name"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
