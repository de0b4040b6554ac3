"""The run's knobs: the tunables declared in tunables.py plus who is asking.

Their defaults are the deployment's settings (`Configuration.from_settings`); a run overrides any
of them (LangServe's `configurable`, Studio's context form, the CLI's flags, tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict

from settings import Settings
from tunables import ServerTunables, Tunables

TUNABLE_FIELDS = frozenset(Tunables.model_fields) | frozenset(ServerTunables.model_fields)


class Configuration(Tunables, ServerTunables):
    model_config = ConfigDict(extra="ignore")

    # who is asking: the server sets this from auth; the CLI from --user
    user: str = "local"
    owner_id: int | None = None
    # a workspace the question is limited to (its id); None: everything the asker may read. Only
    # ever narrows: the asker's membership is checked in SQL when the run reads (member_spaces)
    workspace_id: int | None = None
    # the LLM links to try, in order (names from LLM_LINKS); "" keeps the deployment's order
    llm_order: str = ""

    @classmethod
    def defaults(cls, settings: Settings) -> dict[str, Any]:
        """The deployment's values of every knob (what a run starts from)."""
        values: dict[str, Any] = settings.model_dump(include=set(TUNABLE_FIELDS))
        values["user"] = settings.users.default_user
        return values

    @classmethod
    def overrides(cls, configurable: Mapping[str, Any] | None) -> dict[str, Any]:
        """The knobs a run's `configurable` (or context dict) sets: known names, not None."""
        return {k: v for k, v in (configurable or {}).items() if k in cls.model_fields and v is not None}


def platform_user(configurable: Mapping[str, Any]) -> tuple[int, str] | None:
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
