"""Receivers wired by ``TenancyServiceProvider.ready()``: the guards of ``save()`` (and
of fixture loading, which skips ``save()`` but sends ``pre_save``) and of
many-to-many ``add``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from .context import TENANT
from .exceptions import TenantMismatch
from .guards import (
    check_existing,
    check_primary_key,
    check_related_tenants,
    is_tenant_model,
    remember_state,
    same_tenant,
    stamp_tenant,
)


def guard_save(
    sender: Any, instance: Any, raw: bool = False, using: str | None = None, **kwargs: Any
) -> None:
    if not is_tenant_model(sender):
        return
    if instance._state.adding:
        stamp_tenant(instance)
        check_primary_key(sender, instance, using)
        check_related_tenants(sender, [instance], using=using)
    else:
        check_existing(instance)
        check_related_tenants(sender, [instance], using=using, only_changed=True)


def guard_m2m_add(
    sender: Any,
    instance: Any,
    action: str,
    reverse: bool,
    model: Any,
    pk_set: set[Any] | None,
    using: str | None = None,
    **kwargs: Any,
) -> None:
    """``a.tags.add(b)`` between tenant models: ``b`` must be of ``a``'s tenant."""
    if action != "pre_add" or not pk_set:
        return
    if not (is_tenant_model(type(instance)) and is_tenant_model(model)):
        return
    tenants = set(
        model._base_manager.using(using).filter(pk__in=pk_set).values_list(TENANT, flat=True)
    )
    if any(not same_tenant(t, instance.tenant_id) for t in tenants):
        raise TenantMismatch(
            _("A many-to-many link cannot join rows of two tenants."), code="tenant_mismatch"
        )


def remember_saved(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    """After a save, the row holds what the instance holds: a later change of its tenant
    is caught before the next save starts, like for a row read from the database."""
    if is_tenant_model(sender):
        remember_state(instance)
