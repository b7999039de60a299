"""Endpoints that belong to a tenant, and the tenant's endpoint API.

An event fired under tenant A reaches A's endpoints and the operator's (no tenant),
never tenant B's; fired under no tenant (or every tenant), the operator's only; still
one query. The API (/api/drf/webhook-endpoints/, the demo's router) lets a tenant's
members manage their own endpoints through the suite's DRF classes: the Gate's
``view-webhooks`` and ``manage-webhooks``, another tenant's endpoint a 404, the
private-address guard answering at creation."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from appframework.auth import TokenManager
from appframework.authorization.models import Role
from appframework_tenancy import all_tenants, as_tenant
from appframework_webhooks import WebhookDelivery, WebhookEndpoint, verify_webhook
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import WebhookManager
from testproject.blog.models import Tenant, User
from tests.conftest import demo_tenant

from .conftest import webhook_settings
from .receiver import Receiver

pytestmark = pytest.mark.django_db
API = "/api/drf/webhook-endpoints/"
JSON = {"HTTP_ACCEPT": "application/json"}
PROBLEM = "application/problem+json"


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture
def loopback_allowed(loopback_allowed: None) -> Iterator[None]:
    """These tenants' receivers are the local test listener: let tenants through too."""
    with webhook_settings(ALLOWED_NETWORKS_FOR_TENANTS=True):
        yield


# -- fire() and tenants --------------------------------------------------------------------------
@pytest.fixture
def three_owners() -> dict[str, int]:
    def endpoint(name: str, tenant: int | None) -> int:
        return WebhookEndpoint.objects.create(
            url=f"https://h.example/{name}", event="order.paid", tenant_id=tenant
        ).pk

    return {"operator": endpoint("op", None), "acme": endpoint("a", 1), "globex": endpoint("g", 2)}


def _selected(monkeypatch: Any, capture: Any) -> set[int]:
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(webhook_tasks, "publish_jobs", lambda e, b, jobs, **kw: sent.extend(jobs))
    with capture(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    return {pk for pk, _ in sent}


@pytest.mark.parametrize(
    ("tenant", "reached"),
    [(1, {"operator", "acme"}), (2, {"operator", "globex"}), (None, {"operator"})],
)
def test_an_event_reaches_its_tenants_endpoints_and_the_operators_never_another_tenants(
    three_owners: dict[str, int],
    tenant: int | None,
    reached: set[str],
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with as_tenant(tenant):
        selected = _selected(monkeypatch, django_capture_on_commit_callbacks)
    assert selected == {three_owners[name] for name in reached}


def test_an_event_fired_for_every_tenant_reaches_the_operators_endpoints_only(
    three_owners: dict[str, int], monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with all_tenants():
        assert _selected(monkeypatch, django_capture_on_commit_callbacks) == {
            three_owners["operator"]
        }


def test_firing_under_a_tenant_is_still_one_query(
    three_owners: dict[str, int], django_assert_num_queries: Any
) -> None:
    with transaction.atomic(), django_assert_num_queries(1), as_tenant(2):
        assert len(WebhookManager().fire_sync("order.paid", {"id": 1})) == 2


# -- the API ------------------------------------------------------------------------------------
def _member(email: str, tenant: Tenant, *roles: str) -> Any:
    user = User.objects.create_user(email, "pw")
    user.tenants.add(tenant)
    for name in roles:
        user.roles.add(Role.objects.get_or_create(name=name)[0])
    return user


def _client(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {TokenManager().issue(user)}", **JSON)


@pytest.fixture
def acme_admin(demo_stack: None) -> Client:
    return _client(_member("admin@acme.example", demo_tenant(), "admin"))


@pytest.fixture
def acme_reader(demo_stack: None) -> Client:
    return _client(_member("reader@acme.example", demo_tenant()))


@pytest.fixture
def globex_admin(demo_stack: None) -> Client:
    globex = Tenant.objects.get(pk=2)
    return _client(_member("admin@globex.example", globex, "admin"))


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["code"] == code, body
    return body


def _create(client: Client, receiver: Receiver, **extra: Any) -> dict[str, Any]:
    response = client.post(
        API,
        {"url": receiver.url, "event": "order.*", "description": "orders", **extra},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return dict(response.json())


def test_a_tenant_admin_creates_an_endpoint_owned_by_the_tenant_and_sees_its_secret_once(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    created = _create(acme_admin, receiver)
    assert created["secret"].startswith("whsec_")
    endpoint = WebhookEndpoint.objects.get(pk=created["id"])
    assert (endpoint.tenant_id, endpoint.event, endpoint.active) == (1, "order.*", True)
    assert endpoint.owner is not None and endpoint.owner.email == "admin@acme.example"
    listed = acme_admin.get(API).json()["results"]
    assert [row["id"] for row in listed] == [endpoint.pk]
    assert "secret" not in listed[0]
    assert acme_admin.get(f"{API}{endpoint.pk}/secret/").json() == {"secret": created["secret"]}


def test_the_ssrf_guard_answers_at_creation_with_a_clear_error(
    acme_admin: Client, loopback_allowed: None
) -> None:
    for url in ("http://169.254.169.254/latest/meta-data", "http://10.0.0.8/hook"):
        response = acme_admin.post(
            API, {"url": url, "event": "order.paid"}, content_type="application/json"
        )
        body = _problem(response, 400, "invalid")
        [error] = body["errors"]["url"]
        assert error["code"] == "unsafe_webhook_url"
        assert error["message"].startswith("The webhook URL is not allowed: ")
    assert not WebhookEndpoint.objects.exists()


def test_an_event_outside_the_catalogue_is_refused_at_creation(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    response = acme_admin.post(
        API, {"url": receiver.url, "event": "nothing.*"}, content_type="application/json"
    )
    body = _problem(response, 400, "invalid")
    assert body["errors"]["event"][0]["code"] == "unknown_event"


def test_another_tenants_endpoint_is_not_found_on_every_route(
    acme_admin: Client, globex_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    theirs = _create(globex_admin, receiver)["id"]
    operator = WebhookEndpoint.objects.create(url=receiver.url, event="order.paid").pk
    assert acme_admin.get(API).json()["results"] == []
    for pk in (theirs, operator):
        _problem(acme_admin.get(f"{API}{pk}/"), 404, "not_found")
        _problem(acme_admin.get(f"{API}{pk}/secret/"), 404, "not_found")
        _problem(acme_admin.get(f"{API}{pk}/deliveries/"), 404, "not_found")
        _problem(
            acme_admin.patch(f"{API}{pk}/", {"active": False}, content_type="application/json"),
            404,
            "not_found",
        )
        _problem(acme_admin.post(f"{API}{pk}/rotate-secret/"), 404, "not_found")
        _problem(acme_admin.post(f"{API}{pk}/test/"), 404, "not_found")
        _problem(acme_admin.delete(f"{API}{pk}/"), 404, "not_found")
    assert WebhookEndpoint.objects.filter(pk=theirs, active=True).exists()


def test_a_member_without_manage_webhooks_reads_but_cannot_change(
    acme_admin: Client, acme_reader: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    pk = _create(acme_admin, receiver)["id"]
    assert [row["id"] for row in acme_reader.get(API).json()["results"]] == [pk]
    assert acme_reader.get(f"{API}{pk}/deliveries/").status_code == 200
    _problem(
        acme_reader.post(API, {"url": receiver.url, "event": "*"}, content_type="application/json"),
        403,
        "ability_denied",
    )
    _problem(acme_reader.post(f"{API}{pk}/rotate-secret/"), 403, "ability_denied")
    _problem(acme_reader.get(f"{API}{pk}/secret/"), 403, "ability_denied")
    _problem(acme_reader.delete(f"{API}{pk}/"), 403, "ability_denied")


def test_patch_disables_and_enables_an_endpoint(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    pk = _create(acme_admin, receiver)["id"]
    WebhookEndpoint.objects.filter(pk=pk).update(failure_streak=7, failing_since=timezone.now())
    off = acme_admin.patch(f"{API}{pk}/", {"active": False}, content_type="application/json")
    assert off.status_code == 200
    assert (off.json()["active"], off.json()["disabled_reason"]) == (False, "manual")
    on = acme_admin.patch(f"{API}{pk}/", {"active": True}, content_type="application/json")
    assert (on.json()["active"], on.json()["failure_streak"], on.json()["disabled_at"]) == (
        True,
        0,
        None,
    )
    refused = acme_admin.patch(f"{API}{pk}/", {"secret": "x" * 30}, content_type="application/json")
    assert _problem(refused, 400, "invalid")["errors"]["secret"][0]["code"] == "read_only"


def test_rotate_secret_keeps_the_old_one_for_the_overlap(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    created = _create(acme_admin, receiver)
    response = acme_admin.post(
        f"{API}{created['id']}/rotate-secret/", {"overlap": 600}, content_type="application/json"
    )
    assert response.status_code == 200
    new = response.json()["secret"]
    assert new.startswith("whsec_") and new != created["secret"]
    endpoint = WebhookEndpoint.objects.get(pk=created["id"])
    assert endpoint.previous_secret_expires_at is not None
    assert endpoint.previous_secret_expires_at - timezone.now() > datetime.timedelta(seconds=590)


def test_a_test_event_is_delivered_and_shows_in_the_endpoints_log_without_error_messages(
    acme_admin: Client,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    created = _create(acme_admin, receiver)
    with django_capture_on_commit_callbacks(execute=True):
        response = acme_admin.post(f"{API}{created['id']}/test/")
    assert response.status_code == 202
    delivery_id = response.json()["delivery_id"]
    [hit] = receiver.wait_for(1)
    assert hit.headers["webhook-id"] == delivery_id
    assert hit.headers["X-Webhook-Event"] == "webhook.test"
    assert verify_webhook(created["secret"], hit.headers, hit.body)
    [row] = acme_admin.get(f"{API}{created['id']}/deliveries/").json()["results"]
    assert (row["delivery_id"], row["event"], row["success"]) == (delivery_id, "webhook.test", True)
    assert "error" not in row and row["error_code"] == ""


def test_recover_through_the_api_re_sends_the_failed_deliveries(
    acme_admin: Client,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    created = _create(acme_admin, receiver)
    WebhookDelivery.objects.create(
        endpoint_id=created["id"],
        event="order.paid",
        delivery_id="f" * 32,
        request_body='{"event":"order.paid","data":{"id":3}}',
        final=True,
        status_code=503,
        error="HTTP 503",
    )
    since = (timezone.now() - datetime.timedelta(hours=1)).isoformat()
    with django_capture_on_commit_callbacks(execute=True):
        response = acme_admin.post(
            f"{API}{created['id']}/recover/", {"since": since}, content_type="application/json"
        )
    assert response.status_code == 202
    assert response.json()["queued"] == 1
    [hit] = receiver.wait_for(1)
    assert hit.headers["webhook-id"] == "f" * 32
    failed = acme_admin.get(f"{API}{created['id']}/deliveries/?failed=true").json()["results"]
    assert [row["error_code"] for row in failed] == ["http_503"]


def test_recover_of_a_disabled_endpoint_is_a_422(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    pk = _create(acme_admin, receiver)["id"]
    acme_admin.patch(f"{API}{pk}/", {"active": False}, content_type="application/json")
    response = acme_admin.post(
        f"{API}{pk}/recover/",
        {"since": timezone.now().isoformat()},
        content_type="application/json",
    )
    _problem(response, 422, "endpoint_disabled")


def test_delete_removes_the_endpoint(
    acme_admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    pk = _create(acme_admin, receiver)["id"]
    assert acme_admin.delete(f"{API}{pk}/").status_code == 204
    assert not WebhookEndpoint.objects.filter(pk=pk).exists()


def test_with_no_tenant_selected_the_api_is_a_404(db: Any) -> None:
    """Without the tenant middleware and outside any tenant, nothing is anyone's."""
    user = _member("lonely@example.com", demo_tenant(), "admin")
    with as_tenant(None):
        response = _client(user).get(API)
    _problem(response, 404, "tenant_required")


def test_a_tenant_id_that_is_no_integer_reaches_the_operators_endpoints_only(
    three_owners: dict[str, int], monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Endpoints hold integer tenant ids; a project with UUID tenants still fires."""
    with as_tenant("0b8f1c9e-6a57-4f1e-9a47-2f7c1d3e5a10"):
        assert _selected(monkeypatch, django_capture_on_commit_callbacks) == {
            three_owners["operator"]
        }
