"""A test event sent on request to one endpoint, whatever it subscribes to: the
customer's way to check that their receiver gets and verifies deliveries."""

from __future__ import annotations

import contextvars
import uuid

from django.db import router, transaction
from django.utils import timezone

from appframework.exceptions import ValidationException

from .events import WEBHOOK_TEST
from .manager import serialize
from .models import WebhookEndpoint
from .tasks import publish_jobs

__all__ = ["send_test_event"]


def send_test_event(endpoint: WebhookEndpoint) -> str:
    """Queue a ``webhook.test`` delivery to ``endpoint`` when the transaction commits;
    returns its delivery id (``webhook-id``), to find it in the endpoint's log."""
    if not endpoint.active:
        raise ValidationException(
            "The endpoint is disabled: enable it to send it a test event.",
            code="endpoint_disabled",
        )
    delivery_id = uuid.uuid4().hex
    body = serialize(
        WEBHOOK_TEST, {"endpoint_id": endpoint.pk, "sent_at": timezone.now().isoformat()}
    )
    context = contextvars.copy_context()
    transaction.on_commit(
        lambda: context.run(publish_jobs, WEBHOOK_TEST, body, [(endpoint.pk, delivery_id)]),
        using=router.db_for_write(WebhookEndpoint),
        robust=True,
    )
    return delivery_id
