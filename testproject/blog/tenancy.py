"""The demo's tenant resolver: ``tenant_resolver`` configured, nothing hand-written.

A signed-in user (session or bearer token) works in one of their tenants: the
``X-Tenant`` header of an API call, else the one chosen on /tenant (kept in the
session), else their first. The header is checked against their memberships, never
trusted: asking for a tenant you are not a member of is a 403, not a quiet switch. A
session choice they lost the membership of falls back to their first tenant. Everyone else
browses the public tenant, Acme.
"""

from __future__ import annotations

from typing import Any

from appframework_tenancy.resolvers import require_member as _require_member
from appframework_tenancy.resolvers import tenant_resolver

PUBLIC_TENANT = 1
SESSION_KEY = "tenant_id"
#: The request.META key of the X-Tenant header the resolver reads.
HEADER = "HTTP_X_TENANT"


def member_tenant_ids(user: Any) -> list[int]:
    # The demo keeps memberships in User.tenants (a many-to-many), not in a membership
    # model; the lowest tenant id is a user's first.
    return sorted(user.tenants.values_list("id", flat=True))


resolve_tenant = tenant_resolver(
    member_tenant_ids=member_tenant_ids,
    header="X-Tenant",
    session_key=SESSION_KEY,
    public_tenant=PUBLIC_TENANT,
)


def require_member(tenant: int, members: list[int]) -> int:
    """``tenant``, if it is one of ``members``; a 403 otherwise (a claim, never trusted)."""
    return int(_require_member(tenant, members))
