"""Fixtures of the docs' sample tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture
def _myproject() -> Iterator[None]:
    """``myproject`` (the name the docs give the reader's project) imports the stand-in
    package tests/docs/myproject."""
    from tests.docs import myproject

    previous = sys.modules.get("myproject")
    sys.modules["myproject"] = myproject
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n == "myproject" or n.startswith("myproject.")]:
            del sys.modules[name]
        if previous is not None:
            sys.modules["myproject"] = previous
