"""A mark of an account that does not name it, for what a session keeps.

With signed-cookie sessions the session is readable by whoever holds the cookie, so a
sign-up that found its address taken must leave the same trace as one that made an
account: a random nonce and a MAC of the account's id, never the id itself. The mark of
"nobody" has the same shape and matches no account (no account has the pk "").
"""

from __future__ import annotations

import secrets
from typing import Any

from django.utils.crypto import constant_time_compare, salted_hmac

__all__ = ["account_marker", "marks_account"]

_SALT = "appframework.auth.signup-marker"


def _marker(pk: str, nonce: str) -> str:
    mac = salted_hmac(_SALT, f"{nonce}|{pk}", algorithm="sha256").hexdigest()
    return f"{nonce}:{mac}"


def account_marker(user: Any | None) -> str:
    """A fresh mark of ``user`` (None: of nobody)."""
    return _marker("" if user is None else str(user.pk), secrets.token_urlsafe(12))


def marks_account(marker: object, user: Any) -> bool:
    """Whether ``marker`` is a mark :func:`account_marker` made of ``user``."""
    if not isinstance(marker, str) or ":" not in marker:
        return False
    return constant_time_compare(marker, _marker(str(user.pk), marker.partition(":")[0]))
