"""Whose documents a run reads: resolved once, at the start of the search, and kept in the state.

An answer cites only what the asker may read at the moment of asking (issue 43: a member removed a
moment ago reads nothing of the workspace). That moment is the answerable node, the first after the
guardrail on every path that reads documents (a blocked question touches no database); every node
after it reads the owners it resolved (`readers`) instead of asking the database again. The state
keeps who they were resolved for, so owners resolved for another identity are never reused: a node
run alone (tests, evals) or a state not begun for this asker resolves them afresh.
"""

from __future__ import annotations

from graph.configuration import Configuration
from graph.evidence_store import EvidenceStore
from graph.state import Readers, State


def resolve(store: EvidenceStore, cfg: Configuration) -> Readers:
    """The asker's owners, asked of the store now."""
    owners = store.readers(user=cfg.user, owner_id=cfg.owner_id, workspace_id=cfg.workspace_id)
    return Readers(user=cfg.user, owner_id=cfg.owner_id, workspace_id=cfg.workspace_id, owners=owners)


def kept_for(state: State, cfg: Configuration) -> Readers | None:
    """The owners the state keeps, when they were resolved for this run's asker."""
    kept = state.get("readers")
    if kept and (kept["user"], kept["owner_id"], kept["workspace_id"]) == (cfg.user, cfg.owner_id,
                                                                           cfg.workspace_id):
        return kept
    return None


def readers(state: State, store: EvidenceStore, cfg: Configuration) -> list[int]:
    """The owners whose documents this run reads (module doc)."""
    kept = kept_for(state, cfg) or resolve(store, cfg)
    return list(kept["owners"])
