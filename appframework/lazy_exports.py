"""Lazy re-exports: a package ``__init__`` names its public API without importing
modules that need the app registry, so ``import appframework.x`` works before
``django.setup()``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """Return a module ``__getattr__`` resolving ``name`` from ``exports[name]``
    (a module path relative to ``package``)."""

    def __getattr__(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), name)
        globals_ = importlib.import_module(package).__dict__
        globals_[name] = value
        return value

    return __getattr__
