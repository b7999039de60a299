"""Authorization: the Gate, policies, before-hooks, roles and permissions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .backend import GateBackend
    from .discovery import discover_policies, register_policy
    from .gate import Decision, Gate
    from .guard import (
        authorize,
        authorize_sync,
        authorized,
        has_scope,
        has_scope_sync,
        require_scope,
        require_scope_sync,
    )
    from .mixins import HasRoles
    from .models import Permission, Role
    from .signals import gate_evaluated

_EXPORTS = {
    "Gate": ".gate",
    "Decision": ".gate",
    "authorize": ".guard",
    "authorize_sync": ".guard",
    "authorized": ".guard",
    "has_scope": ".guard",
    "has_scope_sync": ".guard",
    "require_scope": ".guard",
    "require_scope_sync": ".guard",
    "GateBackend": ".backend",
    "discover_policies": ".discovery",
    "register_policy": ".discovery",
    "HasRoles": ".mixins",
    "Role": ".models",
    "Permission": ".models",
    "gate_evaluated": ".signals",
}

__all__ = [
    "Decision",
    "Gate",
    "GateBackend",
    "HasRoles",
    "Permission",
    "Role",
    "authorize",
    "authorize_sync",
    "authorized",
    "discover_policies",
    "gate_evaluated",
    "has_scope",
    "has_scope_sync",
    "register_policy",
    "require_scope",
    "require_scope_sync",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
