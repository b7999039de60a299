"""Cache keys that differ per tenant.

Set ``CACHES[alias]["KEY_FUNCTION"] = "appframework_tenancy.cache.make_key"``: every key
of that cache — low-level ``cache.get``, ``cache_page``, ``{% cache %}`` fragments — then
carries the current tenant, so one tenant never reads another's cached page when the
tenant comes from the session, a header or a token rather than the host name.
"""

from __future__ import annotations

from typing import Any

from .context import ALL_TENANTS, tenant_state

__all__ = ["make_key", "tenant_key_part"]


def tenant_key_part() -> str:
    state = tenant_state()
    if state is None:
        return "-"
    if state is ALL_TENANTS:
        return "*"
    return f"t{state}"


def make_key(key: str, key_prefix: str, version: Any) -> str:
    return f"{key_prefix}:{version}:{tenant_key_part()}:{key}"
