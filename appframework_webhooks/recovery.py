"""Recovery: after a receiver outage, send every failed delivery of an endpoint since a
time once more, each once, with its original ``webhook-id`` (receivers that got it
already drop the repeat) and its exact original body.

A failed delivery is one with an attempt logged since that time and no successful
attempt at all: those that failed for good, and those whose retries an endpoint's
disabling cut short. One still being retried is sent too; the receiver drops the copy
that comes second."""

from __future__ import annotations

import contextvars
import datetime
from collections.abc import Iterator

from django.db import router, transaction

from appframework.exceptions import ValidationException

from .models import WebhookDelivery, WebhookEndpoint
from .tasks import publish_jobs

__all__ = ["failed_deliveries", "recover_deliveries"]


def failed_deliveries(
    endpoint: WebhookEndpoint, since: datetime.datetime
) -> Iterator[tuple[str, str, str]]:
    """(delivery id, event, body) of each failed delivery of ``endpoint`` with an attempt
    since ``since``, oldest first, each once."""
    succeeded = WebhookDelivery.objects.filter(endpoint=endpoint, success=True).values(
        "delivery_id"
    )
    rows = (
        WebhookDelivery.objects.filter(endpoint=endpoint, created_at__gte=since)
        .exclude(delivery_id__in=succeeded)
        .exclude(request_body="")
        .order_by("id")
        .values_list("delivery_id", "event", "request_body")
    )
    seen: set[str] = set()
    for delivery_id, event, body in rows.iterator(chunk_size=500):
        if delivery_id not in seen:
            seen.add(delivery_id)
            yield delivery_id, event, body


def recover_deliveries(endpoint: WebhookEndpoint, since: datetime.datetime) -> int:
    """Queue each failed delivery of ``endpoint`` since ``since`` once more, under its
    original id, when the current transaction commits. Returns how many. A disabled
    endpoint is refused (``ValidationException``, ``endpoint_disabled``): enable it first,
    or the jobs would be skipped."""
    if not endpoint.active:
        raise ValidationException(
            "The endpoint is disabled: enable it before recovering its deliveries.",
            code="endpoint_disabled",
        )
    jobs = list(failed_deliveries(endpoint, since))
    if not jobs:
        return 0
    context = contextvars.copy_context()

    def publish() -> None:
        for delivery_id, event, body in jobs:
            publish_jobs(event, body, [(endpoint.pk, delivery_id)])

    transaction.on_commit(
        lambda: context.run(publish), using=router.db_for_write(WebhookDelivery), robust=True
    )
    return len(jobs)
