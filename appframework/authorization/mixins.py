"""``HasRoles``: roles and permissions on the user model."""

from __future__ import annotations

from typing import Any

from django.db import models

from ..model_meta import without_own_meta

__all__ = ["HasRoles"]

# Per-instance cache: {role name: frozenset(permission names)}.
_CACHE_ATTR = "_appframework_roles"


@without_own_meta
class HasRoles(models.Model):
    """Adds ``roles`` (many-to-many through table ``user_roles``) and the helpers.

    The helpers load the user's roles and their permissions once per user instance, in
    two queries (``prefetch_related``, Django's ``selectin``), then answer from memory:
    ``has_permission`` costs no query however often it is called. Changing the user's
    roles through ``roles.add/remove/set/clear`` (or ``assign_role``/``remove_role``)
    drops the cache of that instance; re-fetch other instances to see the change.

    ``has_permission`` is a raw data check and does not consult ``Gate.before`` hooks;
    use ``Gate.permission(name)`` inside the Gate when the hooks should apply.
    """

    roles = models.ManyToManyField(
        "appframework_authorization.Role",
        related_name="users",
        blank=True,
        db_table="user_roles",
    )

    class Meta:
        abstract = True

    # -- loading -------------------------------------------------------------------------
    def _role_queryset(self) -> Any:
        return self.roles.prefetch_related("permissions").only("id", "name")

    @staticmethod
    def _index(roles: Any) -> dict[str, frozenset[str]]:
        return {role.name: frozenset(p.name for p in role.permissions.all()) for role in roles}

    def _roles_map(self) -> dict[str, frozenset[str]]:
        cached: dict[str, frozenset[str]] | None = self.__dict__.get(_CACHE_ATTR)
        if cached is None:
            cached = self._index(self._role_queryset()) if self.pk is not None else {}
            self.__dict__[_CACHE_ATTR] = cached
        return cached

    async def _aroles_map(self) -> dict[str, frozenset[str]]:
        cached: dict[str, frozenset[str]] | None = self.__dict__.get(_CACHE_ATTR)
        if cached is None:
            roles = [role async for role in self._role_queryset()] if self.pk is not None else []
            cached = self._index(roles)
            self.__dict__[_CACHE_ATTR] = cached
        return cached

    def flush_roles(self) -> None:
        """Forget the loaded roles; the next check reloads them."""
        self.__dict__.pop(_CACHE_ATTR, None)

    # -- role/permission helpers (sync) and Django-style async twins ---------------------
    def has_role(self, name: str) -> bool:
        return name in self._roles_map()

    def has_any_role(self, *names: str) -> bool:
        roles = self._roles_map()
        return any(name in roles for name in names)

    def has_all_roles(self, *names: str) -> bool:
        roles = self._roles_map()
        return all(name in roles for name in names)

    def has_permission(self, name: str) -> bool:
        """True when any of the user's roles grants ``name``."""
        return any(name in perms for perms in self._roles_map().values())

    async def ahas_role(self, name: str) -> bool:
        return name in await self._aroles_map()

    async def ahas_any_role(self, *names: str) -> bool:
        roles = await self._aroles_map()
        return any(name in roles for name in names)

    async def ahas_all_roles(self, *names: str) -> bool:
        roles = await self._aroles_map()
        return all(name in roles for name in names)

    async def ahas_permission(self, name: str) -> bool:
        return any(name in perms for perms in (await self._aroles_map()).values())

    def role_names(self) -> frozenset[str]:
        return frozenset(self._roles_map())

    def permission_names(self) -> frozenset[str]:
        return frozenset().union(*self._roles_map().values())

    # -- assignment ----------------------------------------------------------------------
    def assign_role(self, *roles: Any) -> None:
        """Add roles (``Role`` objects or names; names are created if missing)."""
        from .models import Role

        objs = [r if isinstance(r, Role) else Role.objects.get_or_create(name=r)[0] for r in roles]
        self.roles.add(*objs)

    def remove_role(self, *roles: Any) -> None:
        from .models import Role

        objs = [r if isinstance(r, Role) else Role.objects.filter(name=r).first() for r in roles]
        self.roles.remove(*[o for o in objs if o is not None])
