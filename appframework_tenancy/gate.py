"""The Gate's tenant guard: deny any ability on an object of another tenant.

Objects can reach a request without passing the scoped manager (a generic foreign key,
a row loaded under another tenant, a cache): whatever a policy says, the Gate refuses
them while a tenant is selected. An unsaved object that names no tenant yet is the
current tenant's, as ``save()`` will make it.
"""

from __future__ import annotations

from typing import Any

from .context import current_tenant_id
from .guards import is_tenant_model, same_tenant

__all__ = ["tenant_guard"]


def tenant_guard(user: Any, ability: str, *args: Any) -> bool | None:
    current = current_tenant_id()
    if current is None:
        return None
    for arg in args:
        if not is_tenant_model(type(arg)):
            continue
        tenant = arg.tenant_id
        if tenant is None and arg._state.adding:
            # An unsaved object without a tenant is the current tenant's: save() will
            # stamp it (authorize(request, "create-post", Post(title=...))).
            continue
        if not same_tenant(tenant, current):
            return False
    return None
