"""ALLOWED_NETWORKS open the operator's endpoints only, and a receiver's answer in the
delivery log is read by those who may manage the endpoint only."""

from __future__ import annotations

from typing import Any

import pytest

from appframework_webhooks import WebhookDelivery, WebhookEndpoint
from appframework_webhooks.manager import WebhookManager

from .conftest import webhook_settings
from .receiver import Receiver
from .test_tenant_endpoints import API, acme_admin, acme_reader  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


def test_a_tenant_endpoint_on_an_allowed_network_is_refused_and_the_operators_delivered(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    operator = WebhookEndpoint.objects.create(url=receiver.url, event="*", secret="s" * 24)
    tenant = WebhookEndpoint.objects.create(
        url=receiver.url.replace("/hook", "/tenant"), event="*", secret="s" * 24, tenant_id=1
    )
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("webhook.test", {"endpoint_id": 1, "sent_at": "now"})
    hits = receiver.wait_for(1)
    assert [hit.path for hit in hits] == ["/hook"]
    assert WebhookDelivery.objects.get(endpoint=operator).success
    [refused] = WebhookDelivery.objects.filter(endpoint=tenant)
    assert (refused.success, refused.final, refused.error_code) == (False, True, "unsafe_url")


def test_a_tenant_endpoint_on_an_allowed_network_is_delivered_with_the_setting_on(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="*", tenant_id=1)
    with (
        webhook_settings(ALLOWED_NETWORKS_FOR_TENANTS=True),
        django_capture_on_commit_callbacks(execute=True),
    ):
        WebhookManager().fire_sync("webhook.test", {"endpoint_id": 1, "sent_at": "now"})
    assert len(receiver.wait_for(1)) == 1


def test_the_endpoint_api_refuses_an_allowed_network_url_for_a_tenant(
    acme_admin: Any,  # noqa: F811
    receiver: Receiver,
    loopback_allowed: None,
) -> None:
    response = acme_admin.post(
        API, {"url": receiver.url, "event": "*"}, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"]["url"][0]["code"] == "unsafe_webhook_url"


def test_a_member_without_manage_rights_gets_no_response_body_and_a_manager_does(
    acme_admin: Any,  # noqa: F811
    acme_reader: Any,  # noqa: F811
) -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/x", event="*", tenant_id=1)
    WebhookDelivery.objects.create(
        endpoint=endpoint, event="webhook.test", success=True, response_body="internal secret"
    )
    [read] = acme_reader.get(f"{API}{endpoint.pk}/deliveries/").json()["results"]
    assert "response_body" not in read
    assert "internal secret" not in str(read)
    [managed] = acme_admin.get(f"{API}{endpoint.pk}/deliveries/").json()["results"]
    assert managed["response_body"] == "internal secret"
