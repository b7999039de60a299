"""Recovery: every failed delivery of an endpoint since a time is sent once more, each
once, with its original ``webhook-id`` and body (``recover_deliveries``, the admin action,
``manage.py recover_webhooks``; the API is in test_endpoint_api.py)."""

from __future__ import annotations

import datetime
import io
from collections import Counter
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from appframework.exceptions import ValidationException
from appframework_webhooks import WebhookDelivery, WebhookEndpoint, verify_webhook
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.recovery import recover_deliveries
from testproject.blog.models import User
from tests.conftest import login_client

from .conftest import webhook_settings
from .receiver import Receiver

pytestmark = pytest.mark.django_db
EVENT = "order.paid"
SECRET = "whsec_" + "c2VjcmV0LWZvci1yZWNvdmVyeS10ZXN0cw=="
ENDPOINTS = "/admin/appframework_webhooks/webhookendpoint/"


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture
def outage(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> dict[str, Any]:
    """Three deliveries that failed for good (two attempts each) while the receiver was
    down, one that got through between them, then the receiver back up."""
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret=SECRET)
    failed, delivered = [], []
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.0/8"], MAX_ATTEMPTS=2):
        for n in range(4):
            up = n == 2
            receiver.respond = (lambda i: (200, {}, b"ok")) if up else (lambda i: (503, {}, b""))
            with django_capture_on_commit_callbacks(execute=True):
                [delivery_id] = WebhookManager().fire_sync(EVENT, {"id": n})
            (delivered if up else failed).append(delivery_id)
    receiver.respond = lambda i: (200, {}, b"ok")
    with receiver.lock:
        receiver.hits.clear()
    return {"endpoint": endpoint, "failed": failed, "delivered": delivered}


def _bodies(ids: list[str]) -> dict[str, str]:
    rows = WebhookDelivery.objects.filter(delivery_id__in=ids, attempt=1)
    return {row.delivery_id: row.request_body for row in rows}


def test_recovery_re_sends_each_failed_delivery_once_with_its_original_id_and_body(
    outage: dict[str, Any], receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint, failed = outage["endpoint"], outage["failed"]
    original = _bodies(failed)
    since = timezone.now() - datetime.timedelta(hours=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_deliveries(endpoint, since) == 3
    hits = receiver.wait_for(3)
    assert len(hits) == 3
    assert Counter(hit.headers["webhook-id"] for hit in hits) == Counter(failed)
    for hit in hits:
        assert hit.body.decode() == original[hit.headers["webhook-id"]]
        assert verify_webhook(SECRET, hit.headers, hit.body)
    assert set(
        WebhookDelivery.objects.filter(success=True).values_list("delivery_id", flat=True)
    ) == {*failed, *outage["delivered"]}

    # Recovered: a second recovery finds nothing left to send.
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_deliveries(endpoint, since) == 0
    assert len(receiver.hits) == 3


def test_only_deliveries_with_an_attempt_since_the_time_are_recovered(
    outage: dict[str, Any], receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    first = outage["failed"][0]
    WebhookDelivery.objects.filter(delivery_id=first).update(
        created_at=timezone.now() - datetime.timedelta(days=2)
    )
    with django_capture_on_commit_callbacks(execute=True):
        queued = recover_deliveries(outage["endpoint"], timezone.now() - datetime.timedelta(days=1))
    assert queued == 2
    assert {hit.headers["webhook-id"] for hit in receiver.wait_for(2)} == set(outage["failed"][1:])


def test_a_disabled_endpoint_is_refused_until_it_is_enabled(outage: dict[str, Any]) -> None:
    endpoint = outage["endpoint"]
    endpoint.active = False
    endpoint.save()
    with pytest.raises(ValidationException) as raised:
        recover_deliveries(endpoint, timezone.now() - datetime.timedelta(hours=1))
    assert raised.value.code == "endpoint_disabled"


def test_nothing_is_queued_when_the_transaction_rolls_back(
    outage: dict[str, Any], receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert recover_deliveries(outage["endpoint"], timezone.now() - datetime.timedelta(1)) == 3
    assert len(callbacks) == 1
    assert receiver.hits == []


def test_another_endpoints_failures_are_not_recovered(
    outage: dict[str, Any], receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    other = WebhookEndpoint.objects.create(url=f"{receiver.url}/other", event=EVENT, secret="s")
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_deliveries(other, timezone.now() - datetime.timedelta(hours=1)) == 0
    assert receiver.hits == []


def test_the_command_recovers_since_a_duration_ago(
    outage: dict[str, Any], receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("recover_webhooks", str(outage["endpoint"].pk), "--since", "2h", stdout=out)
    assert out.getvalue().startswith("3 failed delivery(ies) since ")
    assert {hit.headers["webhook-id"] for hit in receiver.wait_for(3)} == set(outage["failed"])


def test_the_command_takes_an_iso_time_and_refuses_anything_else(outage: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command(
        "recover_webhooks", str(outage["endpoint"].pk), "--since", "2999-01-01T00:00", stdout=out
    )
    assert out.getvalue().startswith("0 failed")
    with pytest.raises(CommandError, match="a duration"):
        call_command("recover_webhooks", str(outage["endpoint"].pk), "--since", "yesterday")


def test_the_admin_action_recovers_the_selected_endpoints_since_the_time_given(
    outage: dict[str, Any],
    receiver: Receiver,
    client: Client,
    django_capture_on_commit_callbacks: Any,
) -> None:
    admin = login_client(client, User.objects.create_superuser("root@example.com", "pw"))
    since = (timezone.now() - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(
            ENDPOINTS,
            {
                "action": "recover",
                "since": since,
                "_selected_action": [str(outage["endpoint"].pk)],
            },
            follow=True,
        )
    assert "3 failed delivery(ies)" in response.content.decode()
    assert {hit.headers["webhook-id"] for hit in receiver.wait_for(3)} == set(outage["failed"])
