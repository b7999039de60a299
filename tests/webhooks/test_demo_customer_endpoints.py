"""The demo shows the customer's side: the landing page links the endpoint API and the
event catalogue, and the demo receiver verifies deliveries to endpoints a customer
pointed at it, through the rotation's overlap."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from appframework_webhooks import WebhookEndpoint, new_secret
from appframework_webhooks.delivery import webhook_headers
from appframework_webhooks.rotation import rotate_secret
from appframework_webhooks.signing import signing_keys
from testproject.blog.models import ReceivedWebhook

pytestmark = pytest.mark.django_db
RECEIVER = "http://127.0.0.1:8000/webhooks/receiver"


def _post(body: bytes, secret: object, webhook_id: str) -> int:
    headers = webhook_headers("user.registered", body, secret, webhook_id, int(time.time()))  # type: ignore[arg-type]
    meta = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    meta.pop("HTTP_CONTENT_TYPE")
    response = Client().post(
        "/webhooks/receiver", data=body, content_type="application/json", **meta
    )
    return int(response.status_code)


def test_the_landing_page_links_the_customers_endpoint_page_and_the_catalogue() -> None:
    page = Client().get("/").content.decode()
    assert 'href="/api/drf/webhook-endpoints/"' in page
    assert 'href="/webhooks/events"' in page


def test_the_demo_receiver_verifies_a_customer_endpoint_through_a_rotation() -> None:
    old = new_secret()
    endpoint = WebhookEndpoint.objects.create(url=RECEIVER, event="user.*", secret=old, tenant_id=1)
    body = b'{"event":"user.registered","data":{"user_id":1}}'
    assert _post(body, old, "a" * 32) == 204
    new = rotate_secret(endpoint, overlap=60)
    assert _post(body, signing_keys(new, old), "b" * 32) == 204
    assert _post(body, new_secret(), "c" * 32) == 401
    assert set(ReceivedWebhook.objects.values_list("webhook_id", flat=True)) == {"a" * 32, "b" * 32}
