"""Row-level multi-tenancy: models with a ``tenant_id`` column are scoped to the
current tenant, resolved per request by your resolver (``tenant_resolver(...)`` builds
the common one) and kept in a ``ContextVar``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from appframework.lazy_exports import lazy_exports

from .context import (
    ALL_TENANTS,
    acting_tenant_id,
    all_tenants,
    as_tenant,
    current_tenant_id,
    on_commit,
    tenant_bound,
)
from .exceptions import TenantMismatch, TenantRequired

if TYPE_CHECKING:
    from .apps import TenancyServiceProvider
    from .commands import TenantCommand
    from .middleware import TenantMiddleware
    from .models import (
        AbstractMembership,
        AbstractTenant,
        TenantManager,
        TenantModel,
        TenantModelMixin,
        TenantQuerySet,
        UnscopedTenantManager,
    )
    from .operations import BackfillTenant
    from .resolvers import TenantResolver, select_tenant, tenant_resolver
    from .scope import TenantScope

_EXPORTS = {
    "TenancyServiceProvider": ".apps",
    "TenantCommand": ".commands",
    "TenantMiddleware": ".middleware",
    "AbstractMembership": ".models",
    "AbstractTenant": ".models",
    "TenantManager": ".models",
    "TenantModel": ".models",
    "TenantModelMixin": ".models",
    "TenantQuerySet": ".models",
    "UnscopedTenantManager": ".models",
    "BackfillTenant": ".operations",
    "TenantResolver": ".resolvers",
    "select_tenant": ".resolvers",
    "tenant_resolver": ".resolvers",
    "TenantScope": ".scope",
}

__all__ = [
    "ALL_TENANTS",
    "AbstractMembership",
    "AbstractTenant",
    "BackfillTenant",
    "TenancyServiceProvider",
    "TenantCommand",
    "TenantManager",
    "TenantMiddleware",
    "TenantMismatch",
    "TenantModel",
    "TenantModelMixin",
    "TenantQuerySet",
    "TenantRequired",
    "TenantResolver",
    "TenantScope",
    "UnscopedTenantManager",
    "acting_tenant_id",
    "all_tenants",
    "as_tenant",
    "current_tenant_id",
    "on_commit",
    "select_tenant",
    "tenant_bound",
    "tenant_resolver",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
