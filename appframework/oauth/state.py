"""The one-use OAuth ``state``: kept in the session, spent once, remembered as spent.

The PKCE ``code_verifier`` and the OIDC ``nonce`` of a sign-in live in the same entry.
With the signed-cookie session that is the browser's cookie: signed, not encrypted.
Neither needs to be secret from the browser that started the sign-in; they need to be
out of reach of whoever else holds its code, and that party does not hold the cookie.

The session alone cannot make it one-use: with the signed-cookie session the state lives
in a cookie, and a client that kept the cookie from before the callback can present it
again. So a spent state is also recorded in a cache (``OAUTH["STATE_CACHE"]``) until it
would have expired anyway; the record is written with ``cache.add``, which only one of
two racing callbacks can win.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from django.core.cache import caches
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ForbiddenException

__all__ = ["SESSION_KEY", "consume_state", "remember_state"]

SESSION_KEY = "_appframework_oauth"
# Sign-ins started in other tabs stay valid; older ones are dropped first.
MAX_PENDING = 10
_MAX_STATE_LENGTH = 128


def _session(request: HttpRequest) -> Any:
    session = getattr(request, "session", None)
    if session is None:
        raise RuntimeError("OAuth login needs SessionMiddleware (appframework_oauth.E001).")
    return session


def _pending(session: Any, now: float) -> dict[str, dict[str, Any]]:
    stored = session.get(SESSION_KEY)
    if not isinstance(stored, dict):
        return {}
    ttl = int(app_settings.OAUTH.STATE_TTL)
    return {
        state: entry
        for state, entry in stored.items()
        if isinstance(entry, dict) and float(entry.get("t", 0)) + ttl > now
    }


def remember_state(
    request: HttpRequest,
    provider_name: str,
    next_url: str | None,
    *,
    code_verifier: str | None = None,
    nonce: str | None = None,
) -> str:
    """A new random state for a sign-in with ``provider_name``, stored in the session.

    The entry holds ``p`` (the provider), ``n`` (``next_url``), ``t`` (when it started)
    and, when given, ``v`` (the PKCE ``code_verifier``) and ``o`` (the OIDC ``nonce``):
    both are spent with the state, so each can serve one callback only.
    """
    session = _session(request)
    now = time.time()
    pending = _pending(session, now)
    state = secrets.token_urlsafe(32)
    entry: dict[str, Any] = {"p": provider_name, "n": next_url, "t": now}
    if code_verifier is not None:
        entry["v"] = code_verifier
    if nonce is not None:
        entry["o"] = nonce
    pending[state] = entry
    session[SESSION_KEY] = dict(list(pending.items())[-MAX_PENDING:])
    return state


def _spent_key(state: str) -> str:
    return "appframework:oauth-state:" + hashlib.sha256(state.encode()).hexdigest()


def consume_state(request: HttpRequest, provider_name: str, state: Any) -> dict[str, Any]:
    """Spend ``state`` for a callback from ``provider_name`` and return what was stored
    with it; ``ForbiddenException`` when it is missing, unknown to this session, meant for
    another provider, expired, or spent already."""
    if not isinstance(state, str) or not state:
        raise ForbiddenException(
            _("The sign-in callback carries no state; start the sign-in again."),
            code="oauth_state_missing",
        )
    session = _session(request)
    now = time.time()
    stored = session.get(SESSION_KEY)
    entry = stored.pop(state, None) if isinstance(stored, dict) else None
    cache = caches[app_settings.OAUTH.STATE_CACHE]
    if entry is None and len(state) <= _MAX_STATE_LENGTH and cache.get(_spent_key(state)):
        # Gone from this session because it was spent here: say so, not "mismatch".
        raise _replayed()
    if entry is not None:
        # Spent even when refused below: a state is never tried twice.
        session[SESSION_KEY] = stored
    if (
        len(state) > _MAX_STATE_LENGTH
        or not isinstance(entry, dict)
        or entry.get("p") != provider_name
        or float(entry.get("t", 0)) + int(app_settings.OAUTH.STATE_TTL) <= now
    ):
        raise ForbiddenException(
            _("The sign-in callback does not belong to a sign-in started here; start again."),
            code="oauth_state_mismatch",
        )
    if not cache.add(_spent_key(state), 1, timeout=int(app_settings.OAUTH.STATE_TTL)):
        raise _replayed()
    return entry


def _replayed() -> ForbiddenException:
    return ForbiddenException(
        _("This sign-in callback was used already; start the sign-in again."),
        code="oauth_state_replayed",
    )
