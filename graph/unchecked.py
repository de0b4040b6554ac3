"""What a stream of the graph's own output may show: nothing the check has not passed (issue 39, item 5).

/rag hands the graph to LangServe, whose streams send the graph's updates (`astream`), its run log
(`astream_log`) and its callback events (`astream_events`). Left alone they would show the model's
draft (generate's `answer` and the chat history holding it) and its tokens before verify has read a
word of it, which the chat, /v1 and MCP never show. `CheckedOnly` takes every item of one stream and
gives it back without that: the drafting nodes' answer, their models' output, and a state carrying a
draft as input. Verify's own update and the run's final state are what was checked, and stay.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tracers.log_stream import RunLogPatch

DRAFTING = frozenset({"generate", "choose"})  # nodes that write an `answer` verify has yet to check
CHECKER = "verify"
DRAFT_KEYS = frozenset({"answer", "chat_history"})  # where a draft sits in the state
_MODEL_EVENTS = ("on_chat_model_stream", "on_chat_model_end", "on_llm_stream", "on_llm_end")


def scrubbed(value: Any, path: tuple[str, ...] = ()) -> Any:
    """`value` (a state, updates keyed by node, a log; at `path` in a run log) without its drafts; the
    checker's own update is kept whole (no state has a key named after it: only updates do)."""
    if path[:1] != ("logs",) and CHECKER in path:
        return value
    if isinstance(value, dict):
        return {k: v if k == CHECKER else scrubbed(v) for k, v in value.items() if k not in DRAFT_KEYS}
    if isinstance(value, list):
        return [scrubbed(v, path) for v in value]
    return value


class CheckedOnly:
    """One stream's items without drafts (module doc); `item` answers None for one to leave out."""

    def __init__(self) -> None:
        self._drafting_models: set[str] = set()  # run-log entries of models called by drafting nodes

    def item(self, item: Any) -> Any:
        if isinstance(item, RunLogPatch):
            ops = [op for op in (self._op(op) for op in item.ops) if op is not None]
            return RunLogPatch(*ops) if ops else None
        if isinstance(item, dict) and "event" in item and "data" in item:
            return self._event(item)
        return scrubbed(item)

    def _event(self, event: dict[str, Any]) -> dict[str, Any] | None:
        node = (event.get("metadata") or {}).get("langgraph_node")
        kind, data = event["event"], dict(event.get("data") or {})
        if node in DRAFTING and kind in _MODEL_EVENTS:
            return None
        checked = ((node == CHECKER and kind in ("on_chain_end", "on_chain_stream"))
                   or (not event.get("parent_ids") and kind == "on_chain_end"))  # the run's final state
        for key in list(data):
            if not (checked and key in ("output", "chunk")):
                data[key] = scrubbed(data[key])
        return {**event, "data": data}

    def _op(self, op: dict[str, Any]) -> dict[str, Any] | None:
        path = tuple(p for p in str(op.get("path", "")).split("/") if p)
        if len(path) >= 2 and path[0] == "logs":
            name = path[1]
            entry = op.get("value") if len(path) == 2 and isinstance(op.get("value"), dict) else None
            if entry is not None and entry.get("type") in ("llm", "chat_model") and (
                    (entry.get("metadata") or {}).get("langgraph_node") in DRAFTING):
                self._drafting_models.add(name)
            if name in self._drafting_models and len(path) > 2:
                return None  # the draft's tokens and output
            if len(path) > 2 and path[2] == "final_output" and name == CHECKER:
                return op
        if DRAFT_KEYS & set(path) and (path[:1] == ("logs",) or CHECKER not in path):
            return None
        return {**op, "value": scrubbed(op["value"], path)} if "value" in op else op
