"""How many account mails a client may ask for.

Every mail the account flows send on a visitor's word — a confirmation, a sign-in code,
a password reset — and every sign-up counts against ``AUTH["MAIL_PER_CLIENT"]`` per
client address; the mails also against ``AUTH["MAIL_PER_ADDRESS"]`` per recipient, both
within ``AUTH["MAIL_WINDOW"]`` seconds. Past either, 429 ``mail_rate_limited`` with
``Retry-After``. An address is counted whether or not it has an account, so the limit
tells nobody which addresses do.
"""

from __future__ import annotations

import hashlib

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import TooManyRequestsException

__all__ = ["limit_mail"]


def _refuse(retry_after: float) -> TooManyRequestsException:
    return TooManyRequestsException(
        _("Too many emails were asked for; try again later."),
        code="mail_rate_limited",
        retry_after=retry_after,
    )


def limit_mail(request: HttpRequest, email: str | None) -> None:
    """Count one mail to ``email`` (None: a sign-up without mail) asked for by this
    client; ``TooManyRequestsException`` past the limits."""
    from ..container import container
    from ..ratelimit import RateLimiter
    from .adapter import get_adapter

    settings = app_settings.AUTH
    limiter = container.resolve(RateLimiter)
    window = float(settings.MAIL_WINDOW)
    client = get_adapter(request).get_client_ip(request)
    checks = [(f"af-mail-client:{client}", int(settings.MAIL_PER_CLIENT))]
    if email:
        digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
        checks.append((f"af-mail-address:{digest}", int(settings.MAIL_PER_ADDRESS)))
    for key, limit in checks:
        result = limiter.hit(key, limit, window)
        if not result.allowed:
            raise _refuse(result.retry_after)
