"""Fixtures of the GraphQL transport tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import skip_or_fail_on_ci

from . import schemas

TEST_SCHEMA = "tests.graphql.schemas.schema"
DEMO_SCHEMA = "testproject.blog.schema.schema"

#: The production values docs/graphql.md recommends ("Production limits"); tests set
#: them explicitly rather than relying on the demo's settings.
RECOMMENDED_LIMITS: dict[str, int] = {
    "MAX_DEPTH": 15,
    "MAX_TOKENS": 10000,
    "MAX_ALIASES": 30,
    "MAX_ROOT_FIELDS": 15,
    "MAX_FIELDS": 500,
}

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


# -- Node.js checks (tests/graphql/http_audit: the GraphQL-over-HTTP audit, the GraphiQL
# page in jsdom) ----------------------------------------------------------------------------
NODE_DIR = Path(__file__).parent / "http_audit"
_NODE, _NPM = shutil.which("node"), shutil.which("npm")

@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable, with NODE_DIR's npm packages installed: a printed skip
    without Node.js and npm, a failure under CI."""
    if _NODE is None or _NPM is None:
        skip_or_fail_on_ci("Node.js and npm are not installed")
    packages = json.loads((NODE_DIR / "package.json").read_text())["dependencies"]
    if any(not (NODE_DIR / "node_modules" / name).exists() for name in packages):
        subprocess.run(
            [_NPM, "install", "--no-audit", "--no-fund", "--silent"],
            cwd=NODE_DIR,
            check=True,
            timeout=300,
        )
    return _NODE
