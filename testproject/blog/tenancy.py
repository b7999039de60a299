"""The demo's tenant resolver.

A signed-in user (session or bearer token) works in one of their tenants: the
``X-Tenant`` header of an API call, else the one chosen on /tenant (kept in the
session), else their first. The header is checked against their memberships, never
trusted: asking for a tenant you are not a member of is a 403, not a quiet switch. A
session choice they lost the membership of falls back to their first tenant. Everyone else
browses the public tenant, Acme.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from appframework.auth import current_api_user_sync, current_user_sync
from appframework.exceptions import ForbiddenException
from appframework.http import has_authorization

PUBLIC_TENANT = 1
SESSION_KEY = "tenant_id"
HEADER = "HTTP_X_TENANT"


def member_tenant_ids(user: Any) -> list[int]:
    return sorted(user.tenants.values_list("id", flat=True))


def resolve_tenant(request: HttpRequest) -> int | None:
    user = current_user_sync(request) or current_api_user_sync(request)
    if user is None:
        return PUBLIC_TENANT
    members = member_tenant_ids(user)
    wanted: Any = request.META.get(HEADER)
    if wanted is None:
        if has_authorization(request):
            # A token request is judged by the token alone: its user's tenants and the
            # header, never the session that a browser's cookie may also carry.
            return members[0] if members else PUBLIC_TENANT
        # The session's choice is a preference: one the user is no longer a member of
        # is forgotten (they must still reach /tenant and /logout), not refused.
        session = getattr(request, "session", None)
        chosen = session.get(SESSION_KEY) if session is not None else None
        if chosen in members:
            return int(chosen)
        if chosen is not None and session is not None:
            session.pop(SESSION_KEY, None)
        return members[0] if members else PUBLIC_TENANT
    try:
        tenant = int(wanted)
    except (TypeError, ValueError):
        raise ForbiddenException("Unknown tenant.", code="tenant_not_member") from None
    return require_member(tenant, members)


def require_member(tenant: int, members: list[int]) -> int:
    """``tenant``, if it is one of ``members``; a 403 otherwise (a claim, never trusted)."""
    if tenant not in members:
        raise ForbiddenException("You are not a member of this tenant.", code="tenant_not_member")
    return tenant
