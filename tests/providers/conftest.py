"""Fixtures for provider tests: fake provider endpoints (tests/support/providers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.providers import FakeProvider


@pytest.fixture
def fake() -> Iterator[Callable[..., FakeProvider]]:
    """Factory of FakeProvider endpoints, all closed (and hung requests released) at teardown."""
    made: list[FakeProvider] = []

    def factory(behaviour: str = "ok", **kwargs: Any) -> FakeProvider:
        provider = FakeProvider(behaviour=behaviour, **kwargs)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.close()
