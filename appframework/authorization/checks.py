"""System checks of the AuthorizationServiceProvider (docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks

from ..backends import backend_path
from ..checks import check_warning


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
        check_warning(
            "appframework.W010",
            "appframework.authorization.GateBackend is not in AUTHENTICATION_BACKENDS: "
            "user.has_perm() and {{ perms }} will not see the Gate's abilities.",
            "Add 'appframework.authorization.GateBackend' to AUTHENTICATION_BACKENDS "
            "(authorize() and Gate.allows() work without it).",
        )
    ]


def check_app_order(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W011: an app that registers Gate abilities, policies or hooks is listed before the
    suite's apps: its ready() runs first, so its before-hooks run ahead of the suite's
    (the tenant guard) and it depends on the Gate being bound early."""
    from django.apps import apps

    from ..container import container
    from .gate import Gate

    if Gate not in container:
        return []
    order = [config.name for config in apps.get_app_configs()]
    suite = [i for i, name in enumerate(order) if name.startswith("appframework")]
    if not suite:
        return []
    last_suite = max(suite)
    early: set[str] = set()
    for module in container.resolve(Gate).registered_from:
        config = apps.get_containing_app_config(module)
        if config is None or config.name.startswith("appframework"):
            continue
        if order.index(config.name) < last_suite:
            early.add(config.name)
    return [
        check_warning(
            "appframework.W011",
            f"{name!r} registers Gate abilities but is listed in INSTALLED_APPS before "
            f"{order[last_suite]!r}: its before-hooks would run ahead of the suite's "
            "(the tenant guard among them).",
            f"Move {name!r} after the suite's apps in INSTALLED_APPS.",
        )
        for name in sorted(early)
    ]
