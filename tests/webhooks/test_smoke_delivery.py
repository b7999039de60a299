from __future__ import annotations

import json

import pytest
from django.db import transaction

from appframework_webhooks import WebhookDelivery, WebhookEndpoint, verify_signature
from appframework_webhooks.manager import WebhookManager

pytestmark = pytest.mark.django_db(transaction=True)


def test_fire_delivers_signed_body_once_committed(receiver, loopback_allowed) -> None:
    endpoint = WebhookEndpoint.objects.create(
        url=receiver.url, event="order.shipped", secret="s3cret"
    )
    with transaction.atomic():
        ids = WebhookManager().fire_sync("order.shipped", {"id": 7})
        assert receiver.hits == []
    hits = receiver.wait_for(1)
    assert len(hits) == 1
    hit = hits[0]
    assert json.loads(hit.body) == {"event": "order.shipped", "data": {"id": 7}}
    assert hit.headers["X-Webhook-Event"] == "order.shipped"
    assert verify_signature("s3cret", hit.body, hit.headers["X-Webhook-Signature"])
    assert hit.headers["X-Webhook-Id"] == ids[0]
    row = WebhookDelivery.objects.get()
    assert row.success and row.attempt == 1 and row.endpoint == endpoint


def test_failures_retry_up_to_five_attempts(receiver, loopback_allowed) -> None:
    receiver.respond = lambda n: (500, {}, b"no")
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    WebhookManager().fire_sync("e", {})
    assert len(receiver.wait_for(5)) == 5
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [r.attempt for r in rows] == [1, 2, 3, 4, 5]
    assert [r.final for r in rows] == [False] * 4 + [True]


def test_loopback_blocked_by_default(receiver) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    WebhookManager().fire_sync("e", {})
    assert receiver.hits == []
    row = WebhookDelivery.objects.get()
    assert row.final and "UnsafeWebhookUrlError" in row.error
