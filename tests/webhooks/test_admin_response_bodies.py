"""What a receiver answered may echo a customer's data: in the read-only delivery log it
is shown only to staff who may change endpoints (and superusers), neither rendered nor
filterable for staff who may only view deliveries."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from appframework_webhooks import WebhookDelivery, WebhookEndpoint
from testproject.blog.models import User
from tests.conftest import login_client

DELIVERIES = "/admin/appframework_webhooks/webhookdelivery/"
ANSWER = "card-4242-echoed-by-receiver"

pytestmark = pytest.mark.django_db


def _delivery() -> WebhookDelivery:
    endpoint = WebhookEndpoint.objects.create(url="https://h.example/a", event="order.paid")
    return WebhookDelivery.objects.create(
        endpoint=endpoint,
        event="order.paid",
        delivery_id="d" * 32,
        request_body="{}",
        response_body=ANSWER,
    )


def _staff(client: Client, *permissions: str) -> Client:
    user = User.objects.create_user("staff@example.com", "pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=permissions))
    return login_client(client, user)


def test_staff_who_may_only_view_deliveries_do_not_see_response_bodies(client: Client) -> None:
    delivery = _delivery()
    staff = _staff(client, "view_webhookdelivery")

    page = staff.get(f"{DELIVERIES}{delivery.pk}/change/")

    assert page.status_code == 200
    assert ANSWER not in page.content.decode()
    assert delivery.delivery_id in page.content.decode()  # the rest of the log is shown


def test_staff_who_may_only_view_deliveries_cannot_filter_on_response_bodies(
    client: Client,
) -> None:
    _delivery()
    staff = _staff(client, "view_webhookdelivery")

    response = staff.get(DELIVERIES, {"response_body__startswith": "card"})

    assert response.status_code == 400


def test_staff_who_may_change_endpoints_see_response_bodies(client: Client) -> None:
    delivery = _delivery()
    staff = _staff(client, "view_webhookdelivery", "change_webhookendpoint")

    page = staff.get(f"{DELIVERIES}{delivery.pk}/change/")

    assert page.status_code == 200 and ANSWER in page.content.decode()
    assert staff.get(DELIVERIES, {"response_body__startswith": "card"}).status_code == 200


def test_superusers_see_response_bodies(client: Client) -> None:
    delivery = _delivery()
    root = User.objects.create_superuser("root@example.com", "pw", name="Root")
    page = login_client(client, root).get(f"{DELIVERIES}{delivery.pk}/change/")
    assert page.status_code == 200 and ANSWER in page.content.decode()
