"""Server-side records of SAML login, all in the ``SAML["REPLAY_CACHE"]`` store (by
default one every process shares, appframework.stores):
outstanding AuthnRequest ids, accepted assertion ids, and validated responses waiting
for the browser to come back for them (the resume step).

Outstanding requests cannot be checked against the session at the ACS POST: the IdP's
HTTP-POST is a cross-site request, which browsers send without a ``SameSite=Lax``
session cookie. They are keyed by request id, which comes back as the response's
``InResponseTo``. The session check happens at the resume GET instead (flows.py).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from django.core.cache import BaseCache

from ..conf import app_settings
from ..stores import shared_store

__all__ = [
    "RESUME_TTL",
    "pop_request",
    "remember_assertion",
    "remember_request",
    "stash_response",
    "take_response",
]

# Seconds a validated response waits for the browser's resume GET: that GET follows the
# ACS's 303 at once, so only a slow network needs more than a few seconds.
RESUME_TTL = 120


def _cache() -> BaseCache:
    return shared_store(app_settings.SAML.REPLAY_CACHE)


def _key(kind: str, value: str) -> str:
    return f"appframework:saml-{kind}:" + hashlib.sha256(value.encode()).hexdigest()


def remember_request(request_id: str, provider_name: str, next_url: str | None) -> None:
    _cache().set(
        _key("request", request_id),
        {"p": provider_name, "n": next_url},
        timeout=int(app_settings.SAML.REQUEST_TTL),
    )


def _take(key: str) -> dict[str, Any] | None:
    """The record under ``key``, removed; None when unknown, expired or taken already."""
    cache = _cache()
    entry = cache.get(key)
    # delete() reports whether this call removed it: of two racing callers, one wins.
    if not isinstance(entry, dict) or not cache.delete(key):
        return None
    return entry


def pop_request(request_id: str) -> dict[str, Any] | None:
    """The outstanding request ``request_id``, removed; None when unknown or used."""
    return _take(_key("request", request_id))


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


def stash_response(entry: dict[str, Any]) -> str:
    """Keep a validated response's outcome for ``RESUME_TTL`` seconds; the one-time key."""
    token = secrets.token_urlsafe(32)
    _cache().set(_key("resume", token), entry, timeout=RESUME_TTL)
    return token


def take_response(token: str) -> dict[str, Any] | None:
    """The stashed outcome under ``token``, removed; None when unknown, expired or used."""
    return _take(_key("resume", token))
