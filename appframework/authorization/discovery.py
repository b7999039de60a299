"""Policy discovery from each installed app's ``policies`` module."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, TypeVar

from django.apps import apps
from django.utils.module_loading import module_has_submodule

from .gate import Gate

__all__ = ["discover_policies", "register_policy"]

T = TypeVar("T")

MODULE_NAME = "policies"

# Every @register_policy ever applied, so discovery can apply them to the Gate it is
# given even when a policies module was imported earlier (by an admin.py, say).
_DECORATED: list[tuple[type, Any]] = []


def discover_policies(gate: Gate) -> list[str]:
    """Import every installed app's ``policies`` module, call its ``register(gate)`` if
    it has one, and register every ``@register_policy`` class; returns the modules."""
    found = []
    for app_config in apps.get_app_configs():
        if not module_has_submodule(app_config.module, MODULE_NAME):
            continue
        name = f"{app_config.name}.{MODULE_NAME}"
        module = import_module(name)
        register: Callable[[Gate], Any] | None = getattr(module, "register", None)
        if callable(register):
            register(gate)
        found.append(name)
    for model, policy in _DECORATED:
        gate.policy(model, policy)
    return found


def register_policy(model: type) -> Callable[[T], T]:
    """Class decorator: ``@register_policy(Post)`` registers the class as ``Post``'s
    policy on the container's Gate when its module is imported."""

    def decorator(policy: T) -> T:
        from ..container import container

        _DECORATED.append((model, policy))
        # Also on the Gate bound now, for projects that import their policies from
        # their own ready() instead of using discovery.
        if Gate in container:
            container.resolve(Gate).policy(model, policy)
        return policy

    return decorator
