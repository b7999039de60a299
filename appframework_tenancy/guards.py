"""Write guards: stamp the tenant on new rows, refuse writes that touch, move or point
at another tenant's rows. One helper per rule, shared by ``save()``, ``bulk_create``,
``update``, ``bulk_update``, fixtures and many-to-many ``add``."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from django.apps import apps
from django.db import models
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from .context import TENANT, current_tenant_id
from .exceptions import TenantMismatch, TenantRequired

__all__ = [
    "check_related_tenants",
    "check_update_values",
    "is_tenant_model",
    "same_tenant",
    "stamp_tenant",
]

LOADED_ATTR = "_tenancy_loaded"


#: The class attribute that marks a tenant model (``TenantModelMixin`` sets it).
TENANT_MODEL_MARK = "tenancy_scoped"


def is_tenant_model(model: Any) -> bool:
    """Whether ``model`` is a tenant model (a subclass of ``TenantModelMixin``)."""
    return isinstance(model, type) and getattr(model, TENANT_MODEL_MARK, False) is True


def same_tenant(a: Any, b: Any) -> bool:
    """Tenant ids compare equal whatever their Python type (a resolver may hand back
    ``"5"`` for a column holding ``5``)."""
    return a == b or (a is not None and b is not None and str(a) == str(b))


def _mismatch(message: Any) -> TenantMismatch:
    return TenantMismatch(message, code="tenant_mismatch")


def stamp_tenant(obj: Any) -> None:
    """Give a new row the current tenant; refuse one made for another tenant.

    With no tenant (or every tenant) selected, a new row must name its tenant itself:
    ``tenant_id`` is NOT NULL, and a clear error beats an ``IntegrityError``.
    """
    current = current_tenant_id()  # None for "no tenant" and for "every tenant"
    tenant = obj.tenant_id
    if tenant is None:
        if current is None:
            raise TenantRequired(
                format_lazy(
                    _("No tenant is selected to own the new {model}."),
                    model=type(obj)._meta.verbose_name,
                ),
                code="tenant_required",
            )
        obj.tenant_id = current
    elif current is not None and not same_tenant(tenant, current):
        raise _mismatch(_("A new row cannot be created for another tenant."))


def check_existing(obj: Any) -> None:
    """An existing row keeps its tenant, and only its tenant may save it."""
    loaded = getattr(obj, LOADED_ATTR, None)
    if loaded is not None and TENANT in loaded and not same_tenant(obj.tenant_id, loaded[TENANT]):
        raise _mismatch(_("The tenant of an existing row cannot be changed."))
    current = current_tenant_id()
    if current is not None and not same_tenant(obj.tenant_id, current):
        raise _mismatch(_("This object belongs to another tenant."))


def check_primary_key(model: Any, obj: Any, using: str | None) -> None:
    """A new instance given the primary key of an existing row of another tenant (a
    crafted id) would overwrite that row: Django saves by primary key through the
    unscoped base manager. Checked before the save starts, so the refusal leaves the
    surrounding transaction usable; one query, only when the key was set by hand."""
    if obj.pk is None:
        return
    pk_field = model._meta.pk
    if pk_field.has_default() or getattr(pk_field, "has_db_default", lambda: False)():
        # Django inserts (never updates) a new instance whose key has a default, so an
        # existing key ends in an IntegrityError rather than an overwrite.
        return
    owner = (
        model._base_manager.using(using).filter(pk=obj.pk).values_list(TENANT, flat=True).first()
    )
    if owner is not None and not same_tenant(owner, obj.tenant_id):
        raise _mismatch(_("This object belongs to another tenant."))


@functools.cache
def tenant_foreign_keys(model: type[models.Model]) -> tuple[Any, ...]:
    """The concrete foreign keys (and one-to-ones) of ``model`` that point at a tenant model."""
    return tuple(
        field
        for field in model._meta.concrete_fields
        if field.many_to_one or field.one_to_one
        if is_tenant_model(field.related_model)
    )


@functools.cache
def generic_foreign_keys(model: type[models.Model]) -> tuple[Any, ...]:
    if not apps.is_installed("django.contrib.contenttypes"):
        return ()
    from django.contrib.contenttypes.fields import GenericForeignKey

    return tuple(f for f in model._meta.private_fields if isinstance(f, GenericForeignKey))


def _changed_since_load(obj: Any, attname: str) -> bool:
    loaded = getattr(obj, LOADED_ATTR, None)
    if loaded is None or attname not in loaded:
        return True
    return bool(loaded[attname] != getattr(obj, attname))


def check_related_tenants(
    model: type[models.Model],
    objs: Sequence[Any],
    *,
    fields: Iterable[str] | None = None,
    using: str | None = None,
    only_changed: bool = False,
) -> None:
    """Refuse any object whose foreign keys (or generic foreign key) point at a row of
    another tenant: the database checks only that the row exists, and a cross-tenant
    link is what lets forward descriptors, ``select_related``, ``prefetch_related`` and
    delete cascades (which all bypass the scoped manager) reach foreign rows.

    One query per foreign key per batch, none when the related object is already loaded
    or the key did not change since the row was read.
    """
    names = None if fields is None else set(fields)
    for field in tenant_foreign_keys(model):
        if names is not None and field.name not in names and field.attname not in names:
            continue
        expected: dict[Any, Any] = {}
        for obj in objs:
            value = getattr(obj, field.attname)
            if value is None or (only_changed and not _changed_since_load(obj, field.attname)):
                continue
            if field.is_cached(obj):
                related = field.get_cached_value(obj)
                # Trust a loaded object's tenant only as the database holds it (read or
                # saved, unchanged since): an unsaved stand-in can claim any tenant.
                stored = getattr(related, LOADED_ATTR, None) if related is not None else None
                if stored and TENANT in stored and same_tenant(stored[TENANT], related.tenant_id):
                    if not same_tenant(related.tenant_id, obj.tenant_id):
                        raise _cross(model, field.name)
                    continue
            expected.setdefault(value, []).append(obj.tenant_id)
        if expected:
            target = field.target_field.attname
            found = dict(
                field.related_model._base_manager.using(using)
                .filter(**{f"{target}__in": list(expected)})
                .values_list(target, TENANT)
            )
            for value, tenants in expected.items():
                if value in found and any(not same_tenant(found[value], t) for t in tenants):
                    raise _cross(model, field.name)
    for gfk in generic_foreign_keys(model):
        _check_generic(model, gfk, objs, using)


def _check_generic(model: Any, gfk: Any, objs: Sequence[Any], using: str | None) -> None:
    """One query per target model of the batch, like the concrete foreign keys."""
    from django.contrib.contenttypes.models import ContentType

    ct_attname = model._meta.get_field(gfk.ct_field).attname
    by_type: dict[Any, list[Any]] = {}
    for obj in objs:
        ct_id, object_id = getattr(obj, ct_attname), getattr(obj, gfk.fk_field)
        if ct_id is not None and object_id is not None:
            by_type.setdefault(ct_id, []).append(obj)
    for ct_id, linked in by_type.items():
        target = ContentType.objects.db_manager(using).get_for_id(ct_id).model_class()
        if target is None or not is_tenant_model(target):
            continue
        ids = [target._meta.pk.to_python(getattr(obj, gfk.fk_field)) for obj in linked]
        owners = dict(
            target._base_manager.using(using).filter(pk__in=ids).values_list("pk", TENANT)
        )
        for obj, object_id in zip(linked, ids, strict=True):
            if object_id in owners and not same_tenant(owners[object_id], obj.tenant_id):
                raise _cross(model, gfk.name)


def _cross(model: Any, field: str) -> TenantMismatch:
    return _mismatch(
        format_lazy(
            _("{model}.{field} points at a row of another tenant."),
            model=model.__name__,
            field=field,
        )
    )


def check_update_values(queryset: Any, values: dict[str, Any]) -> None:
    """``queryset.update(**values)``: the tenant column is never rewritten, and a
    foreign key may only be set to a row of the same tenant as every updated row: the
    current tenant, or, with no tenant or every tenant selected, the target's tenant
    (one more query then)."""
    model = queryset.model
    if TENANT in values or "tenant" in values:
        raise _mismatch(_("The tenant of an existing row cannot be changed."))
    current = current_tenant_id()
    for field in tenant_foreign_keys(model):
        for key in (field.name, field.attname):
            if key not in values:
                continue
            value = values[key]
            if hasattr(value, "resolve_expression"):
                continue  # an F()/subquery: evaluated by the database, not checkable here
            if isinstance(value, models.Model):
                value = getattr(value, field.target_field.attname)
            if value is None:
                continue
            tenant = (
                field.related_model._base_manager.using(queryset.db)
                .filter(**{field.target_field.attname: value})
                .values_list(TENANT, flat=True)
                .first()
            )
            if tenant is None:
                continue
            if current is not None:
                if not same_tenant(tenant, current):
                    raise _cross(model, field.name)
            elif queryset.exclude(**{TENANT: tenant}).exists():
                raise _cross(model, field.name)


def check_upsert(
    model: Any, objs: Sequence[Any], using: str | None, options: dict[str, Any]
) -> None:
    """``bulk_create(update_conflicts=True)`` updates the row it collides with, found by
    ``unique_fields`` through no manager: that row must be one of the same tenant."""
    if not options.get("update_conflicts"):
        return
    if TENANT in (options.get("update_fields") or ()):
        raise _mismatch(_("The tenant of an existing row cannot be changed."))
    unique = set(options.get("unique_fields") or ())
    pk_names = {"pk", model._meta.pk.name, model._meta.pk.attname}
    if unique & {TENANT, "tenant"}:
        return
    if unique and unique <= pk_names:
        owners = dict(
            model._base_manager.using(using)
            .filter(pk__in=[obj.pk for obj in objs if obj.pk is not None])
            .values_list("pk", TENANT)
        )
        for obj in objs:
            if obj.pk in owners and not same_tenant(owners[obj.pk], obj.tenant_id):
                raise _mismatch(_("This object belongs to another tenant."))
        return
    raise _mismatch(
        _("An upsert of tenant rows must name tenant_id (or the primary key) in unique_fields.")
    )


@functools.cache
def remembered_attnames(model: type[models.Model]) -> tuple[str, ...]:
    """The columns :func:`remember_state` records for ``model``."""
    return (TENANT, *(f.attname for f in tenant_foreign_keys(model)))


def remember_state(obj: Any) -> None:
    """Record the tenant and tenant foreign keys a row holds in the database now (after
    a load or a save): later saves compare against it. Runs for every row read, so the
    column list is worked out once per model."""
    data = obj.__dict__
    model: Any = obj.__class__
    setattr(
        obj,
        LOADED_ATTR,
        {attname: data[attname] for attname in remembered_attnames(model) if attname in data},
    )
