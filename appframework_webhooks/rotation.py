"""Rotating an endpoint's secret with an overlap: until the previous secret expires,
every delivery carries a ``webhook-signature`` for each secret (newest first), so the
receiver keeps verifying while it deploys the new one."""

from __future__ import annotations

import datetime

from django.utils import timezone

from appframework.conf import app_settings
from appframework.exceptions import ValidationException

from .models import WebhookEndpoint
from .signing import new_secret

__all__ = ["rotate_secret"]

#: The longest overlap a rotation may ask for (a week: the old secret is still a secret).
MAX_OVERLAP = 7 * 24 * 3600


def rotate_secret(
    endpoint: WebhookEndpoint, *, secret: str | None = None, overlap: float | None = None
) -> str:
    """Give ``endpoint`` a new secret (``secret``, or a random ``whsec_`` one) and return
    it. The current secret keeps signing beside it for ``overlap`` seconds
    (``SECRET_OVERLAP`` by default; 0 retires it at once). Only two secrets sign at a time:
    rotating again during an overlap retires the oldest at once."""
    seconds = float(app_settings.WEBHOOKS.SECRET_OVERLAP if overlap is None else overlap)
    if not 0 <= seconds <= MAX_OVERLAP:
        raise ValidationException(
            f"overlap: seconds from 0 to {MAX_OVERLAP}.", code="invalid_overlap"
        )
    fresh = new_secret() if secret is None else secret.strip()
    if not fresh or len(fresh) > 255:
        raise ValidationException("secret: 1 to 255 characters.", code="invalid_secret")
    old = endpoint.secret
    if old and seconds > 0 and old != fresh:
        endpoint.previous_secret = old
        endpoint.previous_secret_expires_at = timezone.now() + datetime.timedelta(seconds=seconds)
    else:
        endpoint.previous_secret = None
        endpoint.previous_secret_expires_at = None
    endpoint.secret = fresh
    endpoint.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return fresh
