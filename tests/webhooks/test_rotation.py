"""Secret rotation: a new secret, an overlap during which every delivery carries both
signatures (space-separated in ``webhook-signature``), then the old one expires. From
code (``rotate_secret``), the admin and ``manage.py rotate_webhook_secret``; the API is
in test_endpoint_api.py."""

from __future__ import annotations

import datetime
import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from appframework.exceptions import ValidationException
from appframework_webhooks import WebhookEndpoint, new_secret, verify_webhook, whsec
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.rotation import rotate_secret
from testproject.blog.models import User
from tests.conftest import login_client

from .conftest import webhook_settings
from .receiver import Hit, Receiver

ENDPOINTS = "/admin/appframework_webhooks/webhookendpoint/"


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


def _send(receiver: Receiver, capture: Any) -> Hit:
    before = len(receiver.hits)
    with capture(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    return receiver.wait_for(before + 1)[before]


@pytest.mark.django_db
def test_a_rotation_keeps_the_old_secret_signing_beside_the_new_until_it_expires(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    old = new_secret()
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event="order.paid", secret=old)
    new = rotate_secret(endpoint, overlap=60)
    endpoint.refresh_from_db()
    assert (endpoint.secret, endpoint.previous_secret) == (new, old)
    assert endpoint.previous_secret_expires_at is not None
    remaining = endpoint.previous_secret_expires_at - timezone.now()
    assert datetime.timedelta(seconds=55) < remaining <= datetime.timedelta(seconds=60)

    during = _send(receiver, django_capture_on_commit_callbacks)
    signatures = during.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    assert verify_webhook(new, during.headers, during.body)
    assert verify_webhook(old, during.headers, during.body)

    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret_expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    after = _send(receiver, django_capture_on_commit_callbacks)
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert verify_webhook(new, after.headers, after.body)
    assert not verify_webhook(old, after.headers, after.body)


@pytest.mark.django_db
def test_the_overlap_defaults_to_secret_overlap_and_zero_retires_the_old_secret_at_once() -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/a", event="e", secret="one")
    with webhook_settings(SECRET_OVERLAP=120):
        rotate_secret(endpoint)
    assert endpoint.previous_secret == "one"
    assert endpoint.previous_secret_expires_at is not None
    assert endpoint.previous_secret_expires_at - timezone.now() > datetime.timedelta(seconds=110)

    rotate_secret(endpoint, secret="whsec_" + "A" * 32, overlap=0)
    endpoint.refresh_from_db()
    assert (endpoint.previous_secret, endpoint.previous_secret_expires_at) == (None, None)
    assert endpoint.secret == "whsec_" + "A" * 32


@pytest.mark.django_db
def test_rotating_again_during_an_overlap_retires_the_oldest_secret() -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/a", event="e", secret="one")
    second = rotate_secret(endpoint, overlap=60)
    third = rotate_secret(endpoint, overlap=60)
    endpoint.refresh_from_db()
    assert (endpoint.secret, endpoint.previous_secret) == (third, second)


@pytest.mark.django_db
@pytest.mark.parametrize("overlap", [-1, 8 * 24 * 3600])
def test_an_overlap_outside_zero_to_a_week_is_refused(overlap: float) -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/a", event="e", secret="one")
    with pytest.raises(ValidationException) as raised:
        rotate_secret(endpoint, overlap=overlap)
    assert raised.value.code == "invalid_overlap"
    endpoint.refresh_from_db()
    assert endpoint.secret == "one"


@pytest.mark.django_db
def test_the_command_rotates_and_prints_the_new_secret_in_whsec_form() -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/a", event="e", secret="one")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "rotate_webhook_secret", str(endpoint.pk), "--overlap", "30", stdout=out, stderr=err
    )
    endpoint.refresh_from_db()
    assert out.getvalue().strip() == whsec(endpoint.secret or "")
    assert endpoint.previous_secret == "one"
    assert "until" in err.getvalue()


@pytest.mark.django_db
def test_the_command_names_a_missing_endpoint() -> None:
    with pytest.raises(CommandError, match="No webhook endpoint 999"):
        call_command("rotate_webhook_secret", "999")


@pytest.mark.django_db
def test_the_admin_action_rotates_each_selected_endpoint(client: Client) -> None:
    admin = login_client(client, User.objects.create_superuser("root@example.com", "pw"))
    a = WebhookEndpoint.objects.create(url="https://h.example/a", event="e", secret="one")
    b = WebhookEndpoint.objects.create(url="https://h.example/b", event="e", secret="two")
    response = admin.post(
        ENDPOINTS, {"action": "rotate_secrets", "_selected_action": [str(a.pk), str(b.pk)]}
    )
    assert response.status_code == 302
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.previous_secret, b.previous_secret) == ("one", "two")
    assert a.secret.startswith("whsec_") and b.secret.startswith("whsec_")
    shown = admin.get(response["Location"]).content.decode()
    assert whsec(a.secret) in shown and whsec(b.secret) in shown  # once, in the message
    page = admin.get(f"{ENDPOINTS}{a.pk}/change/").content.decode()
    assert a.secret not in page and "one" not in page.split('name="secret"')[1][:200]
