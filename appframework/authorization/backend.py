"""``GateBackend``: Django's ``has_perm`` protocol over the Gate.

It answers only for abilities the Gate owns (defined, or a policy method for the object)
and returns False for every other name, so Django's ``app.codename`` permissions, the
admin and ``{{ perms }}`` keep working through the other backends. Note that Django's
``PermissionsMixin.has_perm`` returns True for active superusers before any backend is
asked; use ``authorize()`` / ``Gate.allows()`` when superusers must go through the Gate.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import BaseBackend

from ..backends import is_active
from ..container import container
from .gate import Gate

__all__ = ["GateBackend"]


def _args(obj: Any) -> tuple[Any, ...]:
    if obj is None:
        return ()
    # has_perm takes one object; a tuple carries several Gate arguments.
    return obj if isinstance(obj, tuple) else (obj,)


class GateBackend(BaseBackend):
    def authenticate(self, request: Any, **credentials: Any) -> None:
        return None  # authorization only

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        gate: Gate = container.resolve(Gate)
        args = _args(obj)
        # Django's contract: inactive users have no permissions (ModelBackend does this).
        if not is_active(user_obj) or not gate.has(perm, *args):
            return False
        try:
            return gate.allows_sync(user_obj, perm, *args)
        except KeyError:
            return False

    async def ahas_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        gate: Gate = container.resolve(Gate)
        args = _args(obj)
        if not is_active(user_obj) or not gate.has(perm, *args):
            return False
        try:
            return await gate.allows(user_obj, perm, *args)
        except KeyError:
            return False

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        return False

    async def ahas_module_perms(self, user_obj: Any, app_label: str) -> bool:
        return False
