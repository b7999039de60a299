"""Endpoint health: the count of deliveries in a row that failed for good, and disabling
an endpoint once ``DISABLE_AFTER`` is reached (a count and a time span, both).

Nothing here runs for a delivery to a healthy endpoint: a success costs a statement only
when the endpoint had failures to forget, and a final failure (rare by nature) costs one
update, plus one more when it crosses the threshold.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterable
from typing import Any

from django.core.mail import send_mail
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string
from django.utils import timezone

from appframework.conf import app_settings

from .models import DISABLED_FAILING, DISABLED_MANUALLY, WebhookEndpoint
from .signals import endpoint_disabled

__all__ = [
    "DISABLED_FAILING",
    "DISABLED_MANUALLY",
    "disable_endpoint",
    "disable_threshold",
    "mail_owner",
    "note_final_failures",
    "reset_failure_streaks",
]

logger = logging.getLogger("appframework.webhooks")

SUBJECT_TEMPLATE = "appframework_webhooks/email/endpoint_disabled_subject.txt"
BODY_TEMPLATE = "appframework_webhooks/email/endpoint_disabled.txt"


def disable_threshold() -> tuple[int, datetime.timedelta] | None:
    """``DISABLE_AFTER`` as (failures, time span); None when switched off."""
    value = app_settings.WEBHOOKS.DISABLE_AFTER
    if not value:
        return None
    return int(value["FAILURES"]), datetime.timedelta(seconds=float(value["SECONDS"]))


def reset_failure_streaks(endpoint_ids: Iterable[int]) -> None:
    """A delivery to each of these endpoints succeeded: their failures are forgotten."""
    ids = list(endpoint_ids)
    if ids:
        WebhookEndpoint.objects.filter(pk__in=ids, failure_streak__gt=0).update(
            failure_streak=0, failing_since=None
        )


def note_final_failures(endpoint_ids: Iterable[int]) -> list[WebhookEndpoint]:
    """A delivery to each of these endpoints failed for good: count it, and disable the
    endpoints that reach ``DISABLE_AFTER``. Returns the endpoints disabled now (each by
    exactly one caller: the update that turns it off is conditional)."""
    now = timezone.now()
    disabled = []
    threshold = disable_threshold()
    for endpoint_id in endpoint_ids:
        WebhookEndpoint.objects.filter(pk=endpoint_id).update(
            failure_streak=F("failure_streak") + 1,
            failing_since=Coalesce(F("failing_since"), Value(now)),
        )
        if threshold is None:
            continue
        failures, span = threshold
        turned_off = WebhookEndpoint.objects.filter(
            pk=endpoint_id,
            active=True,
            failure_streak__gte=failures,
            failing_since__lte=now - span,
        ).update(active=False, disabled_at=now, disabled_reason=DISABLED_FAILING)
        if turned_off:
            endpoint = WebhookEndpoint.objects.select_related("owner").get(pk=endpoint_id)
            _announce(endpoint)
            disabled.append(endpoint)
    return disabled


def disable_endpoint(endpoint: WebhookEndpoint, reason: str = DISABLED_MANUALLY) -> None:
    """Turn ``endpoint`` off by hand; nothing more is sent to it. Saving it active again
    clears its failure count (``WebhookEndpoint.save``)."""
    endpoint.active = False
    endpoint.disabled_at = None
    endpoint.disabled_reason = reason
    endpoint.save(update_fields=["active", "disabled_at", "disabled_reason"])


def _announce(endpoint: WebhookEndpoint) -> None:
    since = endpoint.failing_since
    logger.warning(
        "Webhook endpoint %s (%s) disabled: %s deliveries in a row failed since %s.",
        endpoint.pk,
        endpoint.url,
        endpoint.failure_streak,
        since,
    )
    try:
        mail_owner(endpoint)
    except Exception:
        logger.exception("Could not email the owner of webhook endpoint %s.", endpoint.pk)
    for receiver, result in endpoint_disabled.send_robust(
        sender=WebhookEndpoint, endpoint=endpoint, failures=endpoint.failure_streak, since=since
    ):
        if isinstance(result, Exception):
            logger.error("An endpoint_disabled receiver (%r) raised.", receiver, exc_info=result)


def _owner_address(owner: Any) -> str:
    if owner is None:
        return ""
    field = owner.get_email_field_name() if hasattr(owner, "get_email_field_name") else "email"
    return str(getattr(owner, field, "") or "")


def mail_owner(endpoint: WebhookEndpoint) -> bool:
    """Email the endpoint's owner that it was disabled (templates
    ``appframework_webhooks/email/endpoint_disabled_subject.txt`` and ``...disabled.txt``,
    overridable by name; sent from ``DEFAULT_FROM_EMAIL``). False without an address."""
    address = _owner_address(endpoint.owner)
    if not address:
        return False
    context = {
        "endpoint": endpoint,
        "failures": endpoint.failure_streak,
        "since": endpoint.failing_since,
    }
    subject = " ".join(render_to_string(SUBJECT_TEMPLATE, context).split())
    send_mail(subject, render_to_string(BODY_TEMPLATE, context), None, [address])
    return True
