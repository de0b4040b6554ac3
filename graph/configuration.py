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
        return cls.model_validate(values)
