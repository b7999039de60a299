"""The tenant model mixin and its managers, and the abstract tenant and membership.

``class Invoice(TenantModel)`` gets a NOT NULL, indexed ``tenant_id`` column, the scoped
default manager ``objects`` and the explicitly named unscoped manager ``unscoped``.
A model that declares its own tenant column (a ``ForeignKey`` named ``tenant``, a
``UUIDField``...) uses :class:`TenantModelMixin` instead.

``class Tenant(AbstractTenant)`` and ``class Membership(AbstractMembership)`` (which
declares ``tenant = ForeignKey(Tenant, ...)``) are the pair the resolver of
:func:`~appframework_tenancy.resolvers.tenant_resolver` checks claims against.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from django.conf import settings
from django.db import models

from appframework.model_meta import without_own_meta

from .context import TENANT
from .exceptions import TenantMismatch, TenantRequired
from .guards import (
    check_related_tenants,
    check_update_values,
    check_upsert,
    remember_state,
    stamp_tenant,
)
from .scope import TenantScope

__all__ = [
    "AbstractMembership",
    "AbstractTenant",
    "TenantManager",
    "TenantModel",
    "TenantModelMixin",
    "TenantQuerySet",
    "UnscopedTenantManager",
]


class TenantQuerySet(models.QuerySet[Any]):
    """Write paths that skip ``save()`` get the same guards as ``save()``."""

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        objs = list(objs)
        for obj in objs:
            if obj._state.adding:
                stamp_tenant(obj)
        check_upsert(self.model, objs, self.db, kwargs)
        check_related_tenants(self.model, objs, using=self.db)
        created = super().bulk_create(objs, *args, **kwargs)
        for obj in created:
            remember_state(obj)
        return created

    def bulk_update(
        self, objs: Iterable[Any], fields: Iterable[str], *args: Any, **kwargs: Any
    ) -> int:
        objs = list(objs)
        fields = list(fields)
        check_update_values(self, dict.fromkeys(fields))
        check_related_tenants(self.model, objs, fields=fields, using=self.db)
        return super().bulk_update(objs, fields, *args, **kwargs)

    def update(self, **kwargs: Any) -> int:
        check_update_values(self, kwargs)
        return super().update(**kwargs)

    update.alters_data = True  # type: ignore[attr-defined]


class TenantManager(models.Manager.from_queryset(TenantQuerySet)):  # type: ignore[misc]
    """Every read and write through it is scoped to the current tenant, decided when
    the SQL runs. Related managers built from it (``author.invoices``) are scoped too."""

    def get_queryset(self) -> TenantQuerySet:
        return super().get_queryset().filter(TenantScope())


class UnscopedTenantManager(models.Manager.from_queryset(TenantQuerySet)):  # type: ignore[misc]
    """Every tenant's rows, for maintenance code; writes keep the tenant guards."""


@without_own_meta
class TenantModelMixin(models.Model):
    """Scoped ``objects``, unscoped ``unscoped`` and the write guards; the model
    declares the ``tenant_id`` column (or a ``tenant`` foreign key) itself."""

    #: What ``guards.is_tenant_model`` looks for (``TENANT_MODEL_MARK``).
    tenancy_scoped: ClassVar[bool] = True

    objects = TenantManager()
    unscoped = UnscopedTenantManager()

    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any, **kwargs: Any) -> Any:
        instance = super().from_db(db, field_names, values, **kwargs)
        # What the row held when read: the tenant may not change, and unchanged foreign
        # keys need no re-check on save.
        remember_state(instance)
        return instance

    def _do_update(
        self,
        base_qs: Any,
        using: Any,
        pk_val: Any,
        values: Any,
        update_fields: Any,
        forced_update: Any,
        *rest: Any,
    ) -> Any:
        # Django updates through the unscoped base manager by primary key: filtered by
        # the tenant, a primary key of another tenant's row (loaded earlier, or crafted)
        # matches nothing instead of overwriting that row.
        updated = super()._do_update(
            base_qs.filter(**{TENANT: getattr(self, TENANT)}),
            using,
            pk_val,
            values,
            update_fields,
            forced_update,
            *rest,
        )
        if not updated and type(self)._base_manager.using(using).filter(pk=pk_val).exists():
            raise TenantMismatch(code="tenant_mismatch")
        return updated

    def _tenancy_unique_exclude(self, exclude: Any) -> Any:
        # A form leaves tenant_id out of its fields, and Django then skips every unique
        # check that involves it: stamp the tenant first and keep the column in, so
        # "(tenant_id, code) unique" is a form error rather than an IntegrityError.
        if self._state.adding and getattr(self, TENANT, None) is None:
            try:
                stamp_tenant(self)
            except (TenantRequired, TenantMismatch):
                return exclude  # save() raises the same error, clearly
        if exclude and TENANT in exclude:
            exclude = set(exclude) - {TENANT}
        return exclude

    def validate_unique(self, exclude: Any = None) -> None:
        super().validate_unique(exclude=self._tenancy_unique_exclude(exclude))

    def validate_constraints(self, exclude: Any = None) -> None:
        super().validate_constraints(exclude=self._tenancy_unique_exclude(exclude))


class TenantModel(TenantModelMixin):
    """Abstract base with an integer ``tenant_id`` column (NOT NULL, indexed, not
    editable in forms: it is stamped from the current tenant)."""

    tenant_id = models.BigIntegerField(db_index=True, editable=False)

    class Meta:
        abstract = True


class AbstractTenant(models.Model):
    """An organisation whose id tenant models store in ``tenant_id``. Not a tenant model
    itself: the resolver reads it before any tenant is selected."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(unique=True)  # the subdomain, when the resolver reads one

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name


class AbstractMembership(models.Model):
    """A user's membership of a tenant. The concrete model declares
    ``tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE)``: only the project
    knows its tenant model, and a plain foreign key needs no swappable setting.

    Not a tenant model either, for the same reason as the tenant: memberships decide
    which tenant a request runs under, so they are read across tenants."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        constraints = [
            # Named per concrete model: two subclasses (or apps) would otherwise clash.
            models.UniqueConstraint(
                fields=["user", "tenant"], name="%(app_label)s_%(class)s_unique_user_tenant"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {getattr(self, 'tenant', None)}"
