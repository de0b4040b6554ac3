"""The run's owners kept in the state are reused only for the asker they were resolved for (graph/readers.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from graph.configuration import Configuration
from graph.readers import readers, resolve
from graph.state import FRESH, State


class Store:
    def __init__(self, owners: list[int]) -> None:
        self.owners, self.asked = owners, 0

    def readers(self, *, user: str, owner_id: int | None, workspace_id: int | None) -> list[int]:
        self.asked += 1
        return self.owners

    def shelf(self, owners: Sequence[int]) -> Any:
        raise AssertionError("no shelf here")


def test_owners_resolved_for_this_asker_are_reused_without_asking_again() -> None:
    cfg = Configuration(user="ann", owner_id=7, workspace_id=None)
    store = Store([7, 70])
    state = cast(State, {"readers": resolve(store, cfg)})
    assert readers(state, store, cfg) == [7, 70] and readers(state, store, cfg) == [7, 70]
    assert store.asked == 1


def test_owners_resolved_for_another_asker_or_workspace_are_asked_again() -> None:
    store = Store([7, 70])
    state = cast(State, {"readers": resolve(store, Configuration(user="ann", owner_id=7))})
    for other in (Configuration(user="bob", owner_id=8), Configuration(user="ann", owner_id=7, workspace_id=70)):
        store.owners = [8]
        assert readers(state, store, other) == [8]
    assert store.asked == 3
    assert readers(cast(State, {}), store, Configuration(user="ann", owner_id=7)) == [8]  # a node run alone


def test_a_new_question_starts_without_the_last_ones_owners() -> None:
    assert "readers" in FRESH and FRESH["readers"] is None
