""" "Trust this browser" after the second factor (``MFA["TRUST_BROWSER"]``, off by default).

Ticking it stores a random key's SHA-256 in a :class:`~appframework.auth.models.TrustedBrowser`
row and gives the browser a signed cookie with the key, both ending after
``MFA["TRUST_DAYS"]`` days. A later sign-in of the same user from that browser (the
password, a code or single sign-on: still the first factor) skips the second step. The
account pages list trusted browsers and forget them; logging out everywhere and a
password reset forget them all.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from ..conf import app_settings

__all__ = [
    "TRUST_COOKIE",
    "forget_browser",
    "forget_browsers",
    "is_trusted",
    "trust_browser",
    "trusted_browsers",
]

TRUST_COOKIE = "appframework_trusted"
_SALT = "appframework.auth.trusted_browsers"


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _max_age() -> int:
    return int(app_settings.MFA.TRUST_DAYS) * 86400


def trust_browser(request: HttpRequest, response: HttpResponse, user: Any) -> Any:
    """Remember this browser for ``user``: a row and the cookie on ``response``."""
    from .models import TrustedBrowser

    key = secrets.token_urlsafe(32)
    row = TrustedBrowser.objects.create(
        user=user,
        key_hash=_hash(key),
        user_agent=request.headers.get("User-Agent", "")[:200],
        expires_at=timezone.now() + timedelta(seconds=_max_age()),
    )
    response.set_cookie(
        TRUST_COOKIE,
        signing.dumps({"u": str(user.pk), "k": key}, salt=_SALT),
        max_age=_max_age(),
        secure=settings.SESSION_COOKIE_SECURE or request.is_secure(),
        httponly=True,
        samesite="Lax",
    )
    return row


def is_trusted(request: HttpRequest, user: Any) -> bool:
    """Whether this browser carries a live trust of ``user`` (marking it used)."""
    from .models import TrustedBrowser

    if not app_settings.MFA.TRUST_BROWSER:
        return False
    value = request.COOKIES.get(TRUST_COOKIE)
    if not value:
        return False
    try:
        data = signing.loads(value, salt=_SALT, max_age=_max_age())
    except signing.BadSignature:
        return False
    if not isinstance(data, dict) or data.get("u") != str(user.pk) or not data.get("k"):
        return False
    now = timezone.now()
    updated = TrustedBrowser.objects.filter(
        user=user, key_hash=_hash(str(data["k"])), expires_at__gt=now
    ).update(last_used_at=now)
    return bool(updated)


def trusted_browsers(user: Any) -> list[Any]:
    """The user's live trusted browsers, newest first."""
    from .models import TrustedBrowser

    return list(TrustedBrowser.objects.filter(user=user, expires_at__gt=timezone.now()))


def forget_browser(user: Any, pk: Any) -> bool:
    """Forget one of ``user``'s trusted browsers; False when it is not theirs."""
    from .models import TrustedBrowser

    deleted, _rows = TrustedBrowser.objects.filter(user=user, pk=pk).delete()
    return bool(deleted)


def forget_browsers(user: Any) -> None:
    """Forget every trusted browser of ``user``."""
    from .models import TrustedBrowser

    TrustedBrowser.objects.filter(user=user).delete()
