"""Fixtures of the GraphQL transport tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from . import schemas

TEST_SCHEMA = "tests.graphql.schemas.schema"
DEMO_SCHEMA = "testproject.blog.schema.schema"

Configure = Callable[..., None]


@pytest.fixture(autouse=True)
def _reset_spies() -> Iterator[None]:
    schemas.CALLS.clear()
    schemas.CONTEXTS.clear()
    schemas.COUNTER["value"] = 0
    yield
    schemas.CALLS.clear()
    schemas.CONTEXTS.clear()


@pytest.fixture
def configure(settings: Any) -> Configure:
    """``configure(MAX_DEPTH=5, csrf={...})``: APPFRAMEWORK with the test schema and
    the given GRAPHQL keys (and an optional CSRF section)."""

    def _configure(csrf: dict[str, Any] | None = None, **graphql: Any) -> None:
        conf: dict[str, Any] = {"GRAPHQL": {"SCHEMA": TEST_SCHEMA, **graphql}}
        if csrf:
            conf["CSRF"] = dict(csrf)
        settings.APPFRAMEWORK = conf

    return _configure


@pytest.fixture
def gql(configure: Configure) -> Configure:
    """The test schema at default limits (call it again to change keys)."""
    configure()
    return configure
