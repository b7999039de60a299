"""System checks of the AuthorizationServiceProvider (docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks

from ..backends import backend_path
from ..checks import _warning


def check_backend(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W010: without the Gate backend, ``user.has_perm("ability", obj)`` never reaches it."""
    from .backend import GateBackend

    if backend_path(GateBackend) is not None:
        return []
    return [
        _warning(
            "appframework.W010",
            "appframework.authorization.GateBackend is not in AUTHENTICATION_BACKENDS: "
            "user.has_perm() and {{ perms }} will not see the Gate's abilities.",
            "Add 'appframework.authorization.GateBackend' to AUTHENTICATION_BACKENDS "
            "(authorize() and Gate.allows() work without it).",
        )
    ]
