"""The one-use OAuth ``state``: kept in the session, spent once, remembered as spent.

The PKCE ``code_verifier`` and the OIDC ``nonce`` of a sign-in live in the same entry.
With the signed-cookie session that is the browser's cookie: signed, not encrypted.
Neither needs to be secret from the browser that started the sign-in; they need to be
out of reach of whoever else holds its code, and that party does not hold the cookie.

The session alone cannot make it one-use, so a spent state is also recorded in a cache
(``OAUTH["STATE_CACHE"]``) until it would have expired anyway: the suite's one store of
one-use values (``appframework.one_use``), which passkey challenges share.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ForbiddenException
from ..one_use import OneUseStore, Refused

__all__ = ["SESSION_KEY", "consume_state", "remember_state"]

SESSION_KEY = "_appframework_oauth"
# Sign-ins started in other tabs stay valid; older ones are dropped first.
MAX_PENDING = 10

_STORE = OneUseStore(
    SESSION_KEY,
    "appframework:oauth-state:",
    ttl=lambda: int(app_settings.OAUTH.STATE_TTL),
    cache_alias=lambda: app_settings.OAUTH.STATE_CACHE,
    missing_session="OAuth login needs SessionMiddleware (appframework_oauth.E001).",
    # Looked up on each call: tests move this module's clock.
    clock=lambda: time.time(),
    max_pending=MAX_PENDING,
)


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
    entry: dict[str, Any] = {"p": provider_name, "n": next_url}
    if code_verifier is not None:
        entry["v"] = code_verifier
    if nonce is not None:
        entry["o"] = nonce
    return _STORE.remember(request, secrets.token_urlsafe(32), entry)


def consume_state(request: HttpRequest, provider_name: str, state: Any) -> dict[str, Any]:
    """Spend ``state`` for a callback from ``provider_name`` and return what was stored
    with it; ``ForbiddenException`` when it is missing, unknown to this session, meant for
    another provider, expired, or spent already."""
    if not isinstance(state, str) or not state:
        raise ForbiddenException(
            _("The sign-in callback carries no state; start the sign-in again."),
            code="oauth_state_missing",
        )
    try:
        return _STORE.consume(request, state, lambda entry: entry.get("p") == provider_name)
    except Refused as refused:
        if refused.reason == "replayed":
            raise ForbiddenException(
                _("This sign-in callback was used already; start the sign-in again."),
                code="oauth_state_replayed",
            ) from None
        raise ForbiddenException(
            _("The sign-in callback does not belong to a sign-in started here; start again."),
            code="oauth_state_mismatch",
        ) from None
