"""Application events that become webhooks, the admin, and the system checks.

Events: ``appframework.events.user_registered`` fires the webhook event
``user.registered`` with ``{"user_id": <pk>}``. A project adds its own event the same
way: define a ``Signal``, connect a receiver that calls ``fire_webhook(request,
"<event.name>", {...})`` (a JSON object), and send the signal where the thing happens;
the deliveries leave when the transaction commits::

    order_shipped = Signal()

    @receiver(order_shipped)
    def order_shipped_webhook(sender, order, request=None, **kwargs):
        fire_webhook(request, "order.shipped", {"order_id": order.pk})

    order_shipped.send(sender=Order, order=order, request=request)

Admin: endpoints are listed and added there; the delivery log is read-only (no add, no
change) with filters, and its "send_again" action queues a new delivery (a new
X-Webhook-Id) of the same body to the same endpoint.

Checks: E001 for out-of-range settings, W001 when the longest retry wait reaches half the
broker's visibility timeout, W002 (deploy) when the private-address guard is off; each
hint points at its entry in docs/checks.md."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import checks
from django.db import transaction
from django.dispatch import Signal
from django.test import Client, override_settings

from appframework.events import UserRegistered, user_registered
from appframework_webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    fire_webhook,
    verify_signature,
    verify_webhook,
)
from appframework_webhooks.checks import (
    check_settings,
    check_ssrf_guard,
    check_visibility_timeout,
)
from appframework_webhooks.manager import WebhookManager
from testproject.blog.models import User
from tests.conftest import login_client
from tests.system_checks import run_checks

from .conftest import webhook_settings
from .receiver import Receiver

SECRET = "s3cret"
ENDPOINTS = "/admin/appframework_webhooks/webhookendpoint/"
DELIVERIES = "/admin/appframework_webhooks/webhookdelivery/"
PUBLIC_ADDRESS = "93.184.215.14"

_real_getaddrinfo = socket.getaddrinfo


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture
def admin(db: Any, client: Client) -> Client:
    root = User.objects.create_superuser("root@example.com", "pw", name="Root")
    return login_client(client, root)


@pytest.fixture
def public_dns(monkeypatch: Any) -> None:
    """``hooks.example.com`` resolves to a public address (no lookup leaves the
    machine, and nothing is ever sent to it here)."""

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if str(host).lower() == "hooks.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port or 443))]
        return _real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


# -- user_registered ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_user_registered_fires_user_registered_with_the_user_id(
    receiver: Receiver, loopback_allowed: None
) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="user.registered", secret=SECRET)
    WebhookEndpoint.objects.create(url=f"{receiver.url}/other", event="user.deleted")
    user = User.objects.create_user("new@example.com", "pw")
    assert receiver.hits == []
    user_registered.send(sender=User, user=user, request=None)
    (hit,) = receiver.wait_for(1)
    assert hit.path == "/hook"
    assert hit.body == f'{{"event":"user.registered","data":{{"user_id":{user.pk}}}}}'.encode()
    assert hit.headers["X-Webhook-Event"] == "user.registered"
    assert verify_signature(SECRET, hit.body, hit.headers["X-Webhook-Signature"])
    assert verify_webhook(SECRET, hit.headers, hit.body)
    row = WebhookDelivery.objects.get()
    assert row.success and row.event == "user.registered"


@pytest.mark.django_db(transaction=True)
def test_user_registered_alias_and_a_rolled_back_signup_sends_nothing(
    receiver: Receiver, loopback_allowed: None
) -> None:
    """``UserRegistered`` is the same signal; inside a signup transaction that rolls
    back, no webhook leaves (while the same signup committed delivers one)."""
    assert UserRegistered is user_registered
    WebhookEndpoint.objects.create(url=receiver.url, event="user.registered", secret=SECRET)
    with pytest.raises(RuntimeError), transaction.atomic():
        user = User.objects.create_user("gone@example.com", "pw")
        UserRegistered.send(sender=User, user=user, request=None)
        raise RuntimeError("signup failed")
    assert receiver.wait_for(1, timeout=0.2) == []
    assert WebhookDelivery.objects.count() == 0
    assert not User.objects.filter(email="gone@example.com").exists()

    # Control: the same signal in a transaction that commits delivers exactly one hit.
    with transaction.atomic():
        user = User.objects.create_user("kept@example.com", "pw")
        UserRegistered.send(sender=User, user=user, request=None)
        assert receiver.hits == []
    (hit,) = receiver.wait_for(1)
    assert json.loads(hit.body) == {"event": "user.registered", "data": {"user_id": user.pk}}
    assert verify_signature(SECRET, hit.body, hit.headers["X-Webhook-Signature"])
    assert len(receiver.wait_for(2, timeout=0.3)) == 1
    row = WebhookDelivery.objects.get()
    assert row.success and row.event == "user.registered"


# -- a project's own event ---------------------------------------------------------------------------

order_shipped = Signal()


def order_shipped_webhook(sender: Any, order_id: int, request: Any = None, **kwargs: Any) -> None:
    fire_webhook(request, "order.shipped", {"order_id": order_id, "carrier": "UPS"})


@pytest.fixture
def order_shipped_listener() -> Iterator[None]:
    order_shipped.connect(order_shipped_webhook, dispatch_uid="test.order_shipped_webhook")
    try:
        yield
    finally:
        order_shipped.disconnect(dispatch_uid="test.order_shipped_webhook")


@pytest.mark.django_db(transaction=True)
def test_a_project_defined_event_fires_its_webhook_after_commit(
    receiver: Receiver, loopback_allowed: None, order_shipped_listener: None
) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="order.shipped", secret=SECRET)
    with transaction.atomic():
        order_shipped.send(sender=None, order_id=31, request=None)
        assert receiver.hits == []
    (hit,) = receiver.wait_for(1)
    assert json.loads(hit.body) == {
        "event": "order.shipped",
        "data": {"order_id": 31, "carrier": "UPS"},
    }
    assert hit.headers["X-Webhook-Event"] == "order.shipped"
    assert verify_signature(SECRET, hit.body, hit.headers["X-Webhook-Signature"])
    assert WebhookDelivery.objects.get().success


# -- admin: endpoints ------------------------------------------------------------------------------


def test_endpoint_changelist_renders_for_a_superuser(admin: Client) -> None:
    WebhookEndpoint.objects.create(
        url="https://hooks.example.com/a", event="order.paid", secret=SECRET
    )
    response = admin.get(ENDPOINTS)
    assert response.status_code == 200
    page = response.content.decode()
    assert "https://hooks.example.com/a" in page
    assert "order.paid" in page


def test_endpoint_add_page_renders_for_a_superuser(admin: Client) -> None:
    response = admin.get(f"{ENDPOINTS}add/")
    assert response.status_code == 200
    page = response.content.decode()
    for field in ("url", "event", "secret", "active"):
        assert f'name="{field}"' in page


def test_endpoint_add_saves_a_public_url(admin: Client, public_dns: None) -> None:
    response = admin.post(
        f"{ENDPOINTS}add/",
        {"url": "https://hooks.example.com/new", "event": "order.paid", "secret": SECRET},
    )
    assert response.status_code == 302
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.url == "https://hooks.example.com/new"
    assert endpoint.secret == SECRET
    assert endpoint.active is False  # an unchecked checkbox


def test_endpoint_add_refuses_a_loopback_url(admin: Client) -> None:
    response = admin.post(
        f"{ENDPOINTS}add/",
        {"url": "http://127.0.0.1:8000/hook", "event": "order.paid", "active": "on"},
    )
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "url" in form.errors
    assert form.has_error("url", code="unsafe_webhook_url")
    assert not WebhookEndpoint.objects.exists()


def test_endpoints_are_refused_to_anonymous_visitors(db: Any, client: Client) -> None:
    response = client.get(ENDPOINTS)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


# -- admin: the delivery log ---------------------------------------------------------------------


def _delivery(endpoint: WebhookEndpoint, **values: Any) -> WebhookDelivery:
    values.setdefault("event", endpoint.event)
    values.setdefault("delivery_id", "d" * 32)
    values.setdefault("request_body", json.dumps({"event": endpoint.event, "data": {}}))
    return WebhookDelivery.objects.create(endpoint=endpoint, **values)


def test_delivery_changelist_renders_and_has_no_add_permission(admin: Client) -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.com/a", event="e")
    _delivery(endpoint, success=True, status_code=200)
    response = admin.get(DELIVERIES)
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert response.context["has_add_permission"] is False
    assert f"{DELIVERIES}add/" not in response.content.decode()
    assert admin.get(f"{DELIVERIES}add/").status_code == 403
    assert WebhookDelivery.objects.count() == 1


def test_delivery_change_page_is_read_only(admin: Client) -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.com/a", event="e")
    row = _delivery(endpoint, success=False, status_code=500, error="HTTP 500")
    page = admin.get(f"{DELIVERIES}{row.pk}/change/")
    assert page.status_code == 200
    assert page.context["has_change_permission"] is False
    assert 'name="_save"' not in page.content.decode()
    response = admin.post(
        f"{DELIVERIES}{row.pk}/change/", {"event": "tampered", "success": "on", "_save": "1"}
    )
    assert response.status_code == 403
    row.refresh_from_db()
    assert row.event == "e" and row.success is False


def test_delivery_changelist_filters_by_success_final_and_event(admin: Client) -> None:
    paid = WebhookEndpoint.objects.create(url="https://hooks.example.com/a", event="order.paid")
    void = WebhookEndpoint.objects.create(url="https://hooks.example.com/b", event="order.void")
    _delivery(paid, success=True, status_code=200)
    _delivery(paid, success=False, final=False, status_code=500, attempt=1)
    _delivery(paid, success=False, final=True, status_code=500, attempt=2)
    _delivery(void, success=True, status_code=204)

    listing = admin.get(DELIVERIES)
    paths = {getattr(spec, "field_path", None) for spec in listing.context["cl"].filter_specs}
    assert {"success", "final", "event"} <= paths

    def count(query: str) -> int:
        response = admin.get(f"{DELIVERIES}?{query}")
        assert response.status_code == 200
        return int(response.context["cl"].result_count)

    assert count("success__exact=1") == 2
    assert count("success__exact=0") == 2
    assert count("final__exact=1") == 1
    assert count("event=order.void") == 1
    assert count("event=order.paid&success__exact=0&final__exact=0") == 1


def test_send_again_queues_a_new_delivery_of_the_same_body_to_the_same_endpoint(
    admin: Client,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event="order.paid", secret=SECRET)
    WebhookEndpoint.objects.create(url=f"{receiver.url}/other", event="order.paid", active=False)
    with django_capture_on_commit_callbacks(execute=True):
        (first_id,) = WebhookManager().fire_sync("order.paid", {"id": 5, "note": "é"})
    (first,) = receiver.wait_for(1)
    original = WebhookDelivery.objects.get()

    response = admin.post(
        DELIVERIES, {"action": "send_again", "_selected_action": [str(original.pk)]}
    )
    assert response.status_code == 302

    hits = receiver.wait_for(2)
    assert len(hits) == 2
    again = hits[1]
    assert again.path == first.path == "/hook"
    assert again.body == first.body
    assert again.headers["X-Webhook-Id"] != first_id
    assert verify_signature(SECRET, again.body, again.headers["X-Webhook-Signature"])
    assert verify_webhook(SECRET, again.headers, again.body)
    rows = WebhookDelivery.objects.order_by("id")
    assert rows.count() == 2
    resent = rows.last()
    assert resent is not None
    assert resent.endpoint_id == endpoint.pk
    assert resent.delivery_id == again.headers["X-Webhook-Id"]
    assert resent.request_body == original.request_body
    assert resent.success and resent.attempt == 1


def test_send_again_of_several_rows_sends_one_new_delivery_each(
    admin: Client, receiver: Receiver, loopback_allowed: None
) -> None:
    a = WebhookEndpoint.objects.create(url=f"{receiver.url}/a", event="e", secret=SECRET)
    b = WebhookEndpoint.objects.create(url=f"{receiver.url}/b", event="e", secret=SECRET)
    rows = [
        _delivery(a, request_body='{"event":"e","data":{"n":1}}'),
        _delivery(b, request_body='{"event":"e","data":{"n":2}}'),
    ]
    response = admin.post(
        DELIVERIES, {"action": "send_again", "_selected_action": [str(r.pk) for r in rows]}
    )
    assert response.status_code == 302
    hits = receiver.wait_for(2)
    assert sorted((hit.path, hit.body) for hit in hits) == [
        ("/hook/a", b'{"event":"e","data":{"n":1}}'),
        ("/hook/b", b'{"event":"e","data":{"n":2}}'),
    ]
    assert len({hit.headers["X-Webhook-Id"] for hit in hits}) == 2


# -- system checks ---------------------------------------------------------------------------------


def _assert_points_at_docs(messages: list[checks.CheckMessage], code: str) -> None:
    assert messages
    for message in messages:
        assert message.id == f"appframework_webhooks.{code}"
        assert message.hint.endswith(f"See docs/checks.md#appframework_webhooks-{code}.")


def test_check_settings_passes_with_the_defaults() -> None:
    assert check_settings() == []


@pytest.mark.parametrize("attempts", [0, -1, 21, "5", 2.5, True, None])
def test_check_settings_e001_for_max_attempts_out_of_range(attempts: Any) -> None:
    with webhook_settings(MAX_ATTEMPTS=attempts):
        messages = check_settings()
    _assert_points_at_docs(messages, "E001")
    assert len(messages) == 1
    assert isinstance(messages[0], checks.Error)
    assert "MAX_ATTEMPTS" in messages[0].msg


@pytest.mark.parametrize(
    "key", ["CONNECT_TIMEOUT", "READ_TIMEOUT", "DEADLINE", "BACKOFF_BASE", "BACKOFF_CAP"]
)
def test_check_settings_e001_for_a_negative_or_zero_timeout(key: str) -> None:
    for value in (-1, 0, "3"):
        with webhook_settings(**{key: value}):
            messages = check_settings()
        _assert_points_at_docs(messages, "E001")
        assert [key in m.msg for m in messages] == [True]


@pytest.mark.parametrize("limit", [-1, 1.5, "2000"])
def test_check_settings_e001_for_a_bad_response_body_limit(limit: Any) -> None:
    with webhook_settings(RESPONSE_BODY_LIMIT=limit):
        messages = check_settings()
    _assert_points_at_docs(messages, "E001")
    assert "RESPONSE_BODY_LIMIT" in messages[0].msg


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("BATCH_SIZE", 0),
        ("BATCH_SIZE", "100"),
        ("BATCH_CONCURRENCY", 0),
        ("BATCH_CONCURRENCY", 2.5),
        ("BATCH_MIN_ENDPOINTS", 1),
        ("BATCH_MIN_ENDPOINTS", True),
    ],
)
def test_check_settings_e001_for_a_bad_batch_setting(key: str, value: Any) -> None:
    with webhook_settings(**{key: value}):
        messages = check_settings()
    _assert_points_at_docs(messages, "E001")
    assert [key in m.msg for m in messages] == [True]


def test_check_settings_e001_for_a_bad_allowed_networks_entry() -> None:
    with webhook_settings(ALLOWED_NETWORKS=["10.0.0.0/8", "not-a-network", "10.0.0.1/33"]):
        messages = check_settings()
    _assert_points_at_docs(messages, "E001")
    assert len(messages) == 2
    assert "'not-a-network'" in messages[0].msg
    assert "'10.0.0.1/33'" in messages[1].msg


def test_check_settings_accepts_valid_allowed_networks() -> None:
    with webhook_settings(ALLOWED_NETWORKS=["10.0.0.0/8", "192.168.1.7", "fd00::/8"]):
        assert check_settings() == []


def test_check_settings_reports_every_problem_at_once() -> None:
    with webhook_settings(MAX_ATTEMPTS=0, READ_TIMEOUT=-5, ALLOWED_NETWORKS=["nope"]):
        messages = check_settings()
    _assert_points_at_docs(messages, "E001")
    assert len(messages) == 3


def test_check_settings_is_registered_with_django_checks() -> None:
    with webhook_settings(MAX_ATTEMPTS=0):
        ids = {message.id for message in run_checks()}
    assert "appframework_webhooks.E001" in ids


def test_check_visibility_timeout_is_silent_with_the_defaults() -> None:
    assert check_visibility_timeout() == []


def test_check_visibility_timeout_w001_when_the_longest_wait_reaches_half_of_it() -> None:
    with override_settings(CELERY_BROKER_TRANSPORT_OPTIONS={"visibility_timeout": 60}):
        messages = check_visibility_timeout()
    _assert_points_at_docs(messages, "W001")
    assert len(messages) == 1
    assert isinstance(messages[0], checks.Warning)
    # 600 x 1.2 + the hard time limit (3 + 30 + 5 + 10.5 + 10 + 15 = 73.5)
    assert "794 s" in messages[0].msg


def test_check_visibility_timeout_boundary_follows_backoff_cap_and_deadline() -> None:
    # Longest wait plus the job's hard time limit: 100 x 1.2 + 73.5 = 193.5 s.
    with webhook_settings(BACKOFF_CAP=100.0, DEADLINE=30.0):
        with override_settings(CELERY_BROKER_TRANSPORT_OPTIONS={"visibility_timeout": 387}):
            assert [m.id for m in check_visibility_timeout()] == ["appframework_webhooks.W001"]
        with override_settings(CELERY_BROKER_TRANSPORT_OPTIONS={"visibility_timeout": 388}):
            assert check_visibility_timeout() == []


def test_check_visibility_timeout_w001_for_a_large_backoff_cap_under_the_redis_default() -> None:
    with webhook_settings(BACKOFF_CAP=1500.0):
        messages = check_visibility_timeout()
    _assert_points_at_docs(messages, "W001")


def test_check_ssrf_guard_is_silent_with_the_guard_on() -> None:
    assert check_ssrf_guard() == []


def test_check_ssrf_guard_w002_when_blocking_is_off() -> None:
    with webhook_settings(BLOCK_PRIVATE_NETWORK_TARGETS=False):
        messages = check_ssrf_guard()
    _assert_points_at_docs(messages, "W002")
    assert len(messages) == 1
    assert isinstance(messages[0], checks.Warning)


def test_check_ssrf_guard_runs_only_as_a_deploy_check(db: Any) -> None:
    with webhook_settings(BLOCK_PRIVATE_NETWORK_TARGETS=False):
        plain = {m.id for m in run_checks(tags=[checks.Tags.security])}
        deploy = {
            m.id
            for m in run_checks(tags=[checks.Tags.security], include_deployment_checks=True)
        }
    assert "appframework_webhooks.W002" not in plain
    assert "appframework_webhooks.W002" in deploy


# -- admin: the catalogue, enabling and disabling ------------------------------------------------


def test_endpoint_add_refuses_an_event_the_catalogue_lacks(admin: Client, public_dns: None) -> None:
    response = admin.post(
        f"{ENDPOINTS}add/",
        {"url": "https://hooks.example.com/new", "event": "nothing.*", "active": "on"},
    )
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert form.has_error("event", code="unknown_event")
    assert not WebhookEndpoint.objects.exists()


def test_endpoint_add_takes_a_prefix_wildcard(admin: Client, public_dns: None) -> None:
    response = admin.post(
        f"{ENDPOINTS}add/",
        {"url": "https://hooks.example.com/new", "event": "order.*", "active": "on"},
    )
    assert response.status_code == 302
    assert WebhookEndpoint.objects.get().event == "order.*"


def test_the_disable_and_enable_actions_turn_an_endpoint_off_and_back_with_no_failures(
    admin: Client,
) -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.com/a", event="e")
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failure_streak=4)
    admin.post(ENDPOINTS, {"action": "disable", "_selected_action": [str(endpoint.pk)]})
    endpoint.refresh_from_db()
    assert (endpoint.active, endpoint.disabled_reason) == (False, "manual")
    admin.post(ENDPOINTS, {"action": "enable", "_selected_action": [str(endpoint.pk)]})
    endpoint.refresh_from_db()
    assert (endpoint.active, endpoint.failure_streak, endpoint.disabled_at) == (True, 0, None)


# -- the secret is write-only in the admin -------------------------------------------------------


def test_the_change_page_never_renders_the_endpoint_secret(admin: Client) -> None:
    secret = "whsec_" + "S" * 32
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.com/x", event="order.paid", secret=secret
    )
    page = admin.get(f"{ENDPOINTS}{endpoint.pk}/change/").content.decode()
    assert 'name="secret"' in page
    assert "S" * 32 not in page


@pytest.mark.parametrize(
    "lookup",
    ["secret__startswith=whsec_A", "secret=x", "previous_secret__regex=^w", "owner__password=x"],
)
def test_a_changelist_lookup_on_a_secret_is_refused(admin: Client, lookup: str) -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/x", event="e", secret="whsec_A")
    assert admin.get(f"{ENDPOINTS}?{lookup}").status_code == 400


def test_saving_the_change_form_empty_keeps_the_secret_and_a_typed_one_rotates_it(
    admin: Client, public_dns: None
) -> None:
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.com/x", event="order.paid", secret="old-secret", active=True
    )
    form = {"url": endpoint.url, "event": endpoint.event, "active": "on", "secret": ""}
    assert admin.post(f"{ENDPOINTS}{endpoint.pk}/change/", form).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.secret == "old-secret"
    response = admin.post(
        f"{ENDPOINTS}{endpoint.pk}/change/", {**form, "secret": "new-secret"}, follow=True
    )
    endpoint.refresh_from_db()
    assert (endpoint.secret, endpoint.previous_secret) == ("new-secret", "old-secret")
    assert "shown this once" in response.content.decode()
