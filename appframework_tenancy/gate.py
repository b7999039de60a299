"""The Gate's tenant guard: deny any ability on an object of another tenant.

Objects can reach a request without passing the scoped manager (a generic foreign key,
a row loaded under another tenant, a cache): whatever a policy says, the Gate refuses
them while a tenant is selected.
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
        if is_tenant_model(type(arg)) and not same_tenant(arg.tenant_id, current):
            return False
    return None
