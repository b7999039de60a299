"""Server-side records of SAML login: outstanding AuthnRequest ids and accepted
assertion ids, both in the ``SAML["REPLAY_CACHE"]`` cache alias.

Outstanding requests cannot live in the session: the IdP's HTTP-POST to the ACS is a
cross-site request, which browsers send without a ``SameSite=Lax`` session cookie. They
are keyed by request id, which comes back as the response's ``InResponseTo``.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.core.cache import caches

from ..conf import app_settings

__all__ = ["pop_request", "remember_assertion", "remember_request"]


def _cache() -> Any:
    return caches[app_settings.SAML.REPLAY_CACHE]


def _key(kind: str, value: str) -> str:
    return f"appframework:saml-{kind}:" + hashlib.sha256(value.encode()).hexdigest()


def remember_request(request_id: str, provider_name: str, next_url: str | None) -> None:
    _cache().set(
        _key("request", request_id),
        {"p": provider_name, "n": next_url},
        timeout=int(app_settings.SAML.REQUEST_TTL),
    )


def pop_request(request_id: str) -> dict[str, Any] | None:
    """The outstanding request ``request_id``, removed; None when unknown or used."""
    cache = _cache()
    key = _key("request", request_id)
    entry = cache.get(key)
    # delete() reports whether this call removed it: of two racing ACS posts, one wins.
    if not isinstance(entry, dict) or not cache.delete(key):
        return None
    return entry


def remember_assertion(
    provider_name: str, assertion_id: str, not_on_or_after: float | None
) -> bool:
    """Record an accepted assertion id; False when it was recorded already (a replay).

    Kept for ``REPLAY_WINDOW`` seconds, or until the assertion itself expires (plus the
    clock skew) when that is later: a replay must never outlive its record.
    """
    window = int(app_settings.SAML.REPLAY_WINDOW)
    if not_on_or_after is not None:
        remaining = not_on_or_after - time.time() + int(app_settings.SAML.CLOCK_SKEW)
        window = max(window, int(remaining) + 1)
    return bool(_cache().add(_key(f"assertion:{provider_name}", assertion_id), 1, timeout=window))
