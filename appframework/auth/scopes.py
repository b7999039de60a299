"""Which scope a request needs from a personal access token limited to scopes.

A token made with scopes may be used only within them; a session, a signed token and a
personal access token made without scopes are not limited. What a request needs, unless
the view names its own (DRF's ``required_scopes``, ninja's ``BearerAuth(scopes=...)``,
``authorize(..., scope=)``, a Gate ability defined with ``scope=``):

- ``read`` for a safe method (GET, HEAD, OPTIONS) and a GraphQL query or subscription;
- ``write`` for any other method and a GraphQL mutation.

The suite's webhook endpoint API asks for ``webhooks`` instead (it hands out signing
secrets): docs/tokens.md#scopes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from ..exceptions import ForbiddenException

__all__ = [
    "READ",
    "SAFE_METHODS",
    "WEBHOOKS",
    "WRITE",
    "insufficient_scope",
    "method_scope",
    "missing_scope",
]

READ = "read"
WRITE = "write"
WEBHOOKS = "webhooks"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def method_scope(method: str | None) -> str:
    """``read`` for a safe method, ``write`` for any other."""
    return READ if (method or "GET").upper() in SAFE_METHODS else WRITE


def missing_scope(token: Any, scopes: Iterable[str]) -> str | None:
    """The first of ``scopes`` the verified bearer ``token`` may not be used for; None
    when it may be used for all of them (or there is no token: a session is not
    limited)."""
    if token is None:
        return None
    for scope in scopes:
        if not token.has_scope(scope):
            return str(scope)
    return None


def insufficient_scope(scope: str) -> ForbiddenException:
    """The 403 of a bearer token not limited to ``scope``: ``code: insufficient_scope``
    with RFC 6750's challenge, ``WWW-Authenticate: Bearer error="insufficient_scope",
    scope="<scope>"``."""
    return ForbiddenException(
        format_lazy(_("This token may not be used for this ({scope})."), scope=scope),
        code="insufficient_scope",
        www_authenticate=f'Bearer error="insufficient_scope", scope="{scope}"',
    )
