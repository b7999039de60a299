"""Events fired with no tenant acting reach the operator's endpoints only: an anonymous
request runs under the demo's public tenant (Acme) to read its pages, but a sign-up is
no tenant's event, so Acme's ``*`` endpoint must not hear of every account made."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework_tenancy import acting_tenant_id, as_tenant, current_tenant_id, tenant_bound
from appframework_tenancy.context import entered_state
from appframework_webhooks import WebhookEndpoint
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import WebhookManager
from testproject.blog.tenancy import PUBLIC_TENANT

HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
GOOD_PASSWORD = "Velvet-orbit-Marmalade-93"

pytestmark = pytest.mark.django_db


def _endpoints() -> dict[str, int]:
    def endpoint(name: str, tenant: int | None) -> int:
        return WebhookEndpoint.objects.create(
            url=f"https://h.example/{name}", event="*", tenant_id=tenant
        ).pk

    return {"operator": endpoint("op", None), "public": endpoint("acme", PUBLIC_TENANT)}


def _sent(monkeypatch: Any) -> list[tuple[int, str]]:
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(webhook_tasks, "publish_jobs", lambda e, b, jobs, **kw: sent.extend(jobs))
    return sent


@pytest.mark.django_db(transaction=True)  # the sign-up's own commit sends the deliveries
def test_an_anonymous_signup_under_the_public_tenant_reaches_the_operators_endpoint_only(
    demo_stack: None, monkeypatch: Any
) -> None:
    endpoints = _endpoints()
    sent = _sent(monkeypatch)
    client = Client(enforce_csrf_checks=True)
    assert client.get("/signup", **HTML).status_code == 200
    token = client.cookies["csrf_token"].value

    response = client.post(
        "/signup",
        {"email": "newcomer@example.com", "password": GOOD_PASSWORD, "_token": token},
        **HTML,
    )

    assert response.status_code == 302
    assert {pk for pk, _ in sent} == {endpoints["operator"]}


def test_an_event_fired_for_the_public_tenant_on_purpose_still_reaches_its_endpoints(
    monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    endpoints = _endpoints()
    sent = _sent(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True), as_tenant(PUBLIC_TENANT):
        WebhookManager().fire_sync("user.registered", {"user_id": 1})
    assert {pk for pk, _ in sent} == {endpoints["operator"], endpoints["public"]}


def test_the_public_fallback_reads_its_tenant_but_acts_for_none_and_as_tenant_clears_it() -> None:
    with entered_state(PUBLIC_TENANT, public=True):
        assert current_tenant_id() == PUBLIC_TENANT
        assert acting_tenant_id() is None
        assert tenant_bound(acting_tenant_id)() is None  # carried to threads too
        with as_tenant(PUBLIC_TENANT):
            assert acting_tenant_id() == PUBLIC_TENANT
        assert acting_tenant_id() is None
    with as_tenant(2):
        assert acting_tenant_id() == 2
