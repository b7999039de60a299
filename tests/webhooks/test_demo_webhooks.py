"""The demo's webhook tour: /signup announces the new account as ``user.registered``,
the demo's own receiver (/webhooks/receiver) checks both signatures and records what
arrived (signed, fresh posts only, each ``X-Webhook-Id`` once), /webhooks shows staff
the endpoints, deliveries (an error's code, never its message) and receipts (never a
secret), the landing page points there, and ``seed_demo`` wires the endpoint once.

Deliveries leave when the signup's transaction commits (eager Celery: inline), and a
job runs under the tenant that fired it, even when the commit happens outside it."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
import requests
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client, override_settings
from django.utils import timezone

from appframework.events import user_registered
from appframework_tenancy import as_tenant, current_tenant_id
from appframework_webhooks import WebhookDelivery, WebhookEndpoint, verify_signature
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.delivery import AttemptResult, webhook_headers
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.signing import sign, sign_v2
from appframework_webhooks.tasks import FAN_OUT_THRESHOLD
from appframework_webhooks.transport import close_pooled_connections
from testproject.blog import views as demo_views
from testproject.blog.models import ReceivedWebhook, User
from tests.conftest import login_client

from .conftest import webhook_settings

COOKIE = "csrf_token"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
GOOD_PASSWORD = "Velvet-orbit-Marmalade-93"
EVENT = "user.registered"


def _secret() -> str:
    return str(settings.DEMO_WEBHOOK_SECRET)


def _signup(client: Client, email: str, password: str = GOOD_PASSWORD, **extra: Any) -> Any:
    """Show the form (which sets the CSRF cookie), then post it with the token."""
    form = client.get("/signup", **HTML)
    assert form.status_code == 200
    token = client.cookies[COOKIE].value
    return client.post(
        "/signup", {"email": email, "password": password, "_token": token}, **HTML, **extra
    )


def _post_to_receiver(client: Client, body: bytes, headers: dict[str, str]) -> Any:
    sent = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    return client.post(
        "/webhooks/receiver", data=body, content_type="application/json", headers=sent
    )


def _signed(
    body: bytes,
    *,
    secret: str | None = None,
    timestamp: int | None = None,
    webhook_id: str = "a1b2c3d4e5f60718293a4b5c6d7e8f90",
) -> dict:
    return webhook_headers(
        EVENT,
        body,
        _secret() if secret is None else secret,
        webhook_id,
        int(time.time()) if timestamp is None else timestamp,
    )


def _signed_in(email: str, *, is_staff: bool) -> Client:
    user = User.objects.create_user(email, GOOD_PASSWORD, is_staff=is_staff)
    return login_client(Client(enforce_csrf_checks=True), user)


def _staff() -> Client:
    return _signed_in("staff.member@example.com", is_staff=True)


@pytest.fixture
def demo_endpoint_on_live_server(live_server: Any) -> Iterator[WebhookEndpoint]:
    """``seed_demo``'s endpoint pointed at a real server running the demo (its address
    as 127.0.0.1, which the guard is told to allow)."""
    base = f"http://127.0.0.1:{live_server.thread.port}"
    with (
        override_settings(DEMO_BASE_URL=base),
        webhook_settings(
            ALLOWED_NETWORKS=["127.0.0.0/8"],
            BACKOFF_BASE=0.01,
            BACKOFF_CAP=0.05,
            CONNECT_TIMEOUT=2.0,
            READ_TIMEOUT=5.0,
            DEADLINE=8.0,
        ),
    ):
        call_command("seed_demo", stdout=StringIO())
        try:
            yield WebhookEndpoint.objects.get(event=EVENT)
        finally:
            # A kept-alive connection would hold a server thread open until the process
            # exits, when it would close the shared test database from the wrong thread.
            close_pooled_connections()


# -- signup → delivery → the demo's receiver → /webhooks --------------------------------------
@pytest.mark.django_db(transaction=True)
def test_signup_delivers_a_signed_user_registered_webhook_to_the_demo_receiver(
    demo_endpoint_on_live_server: WebhookEndpoint,
) -> None:
    endpoint = demo_endpoint_on_live_server
    assert endpoint.url.endswith("/webhooks/receiver") and endpoint.secret == _secret()
    client = Client(enforce_csrf_checks=True)

    response = _signup(client, "newcomer@example.com")

    # The demo confirms addresses first (mandatory): the account and its event exist now.
    assert response.status_code == 302 and response["Location"] == "/signup/sent"
    user = User.objects.get(email="newcomer@example.com")
    received = ReceivedWebhook.objects.get()
    assert received.event == EVENT
    assert received.signature_valid is True
    assert received.replay_proof_valid is True
    assert json.loads(received.body) == {"event": EVENT, "data": {"user_id": user.pk}}
    delivery = WebhookDelivery.objects.get()
    assert delivery.success and delivery.status_code == 204 and delivery.attempt == 1
    assert delivery.endpoint_id == endpoint.pk and delivery.event == EVENT
    assert delivery.delivery_id == received.webhook_id
    assert json.loads(delivery.request_body) == {"event": EVENT, "data": {"user_id": user.pk}}


@pytest.mark.django_db(transaction=True)
def test_webhooks_page_shows_the_delivery_and_the_receipt_but_never_the_secret(
    demo_endpoint_on_live_server: WebhookEndpoint,
) -> None:
    _signup(Client(enforce_csrf_checks=True), "watcher@example.com")
    received = ReceivedWebhook.objects.get()

    page = _staff().get("/webhooks", **HTML)

    assert page.status_code == 200
    html = page.content.decode()
    assert demo_endpoint_on_live_server.url in html and "(signed)" in html
    log = html.split("<h3>Delivery log", 1)[1].split("<h3>Received", 1)[0]
    assert f"<td>{EVENT}</td>" in log and "<td>204</td>" in log and "delivered" in log
    receipts = html.split("<h3>Received", 1)[1]
    assert f"<code>{EVENT}</code> id {received.webhook_id}" in receipts
    assert "signature valid, timestamp fresh" in receipts
    assert _secret() not in html
    assert 'href="/signup"' in html and 'href="/admin/' in html


@pytest.mark.django_db
def test_webhooks_page_asks_an_anonymous_visitor_to_sign_in_with_401() -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event=EVENT)

    page = Client().get("/webhooks", **HTML)
    api = Client().get("/webhooks", HTTP_ACCEPT="application/json")

    assert page.status_code == 401
    assert "hooks.example.com" not in page.content.decode()
    assert api.status_code == 401 and api.json()["code"] == "not_authenticated"


@pytest.mark.django_db
def test_webhooks_page_refuses_a_signed_in_user_who_is_not_staff_with_403() -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event=EVENT)

    page = _signed_in("member@example.com", is_staff=False).get("/webhooks", **HTML)

    assert page.status_code == 403
    assert "hooks.example.com" not in page.content.decode()


@pytest.mark.django_db
def test_webhooks_page_opens_for_staff() -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event=EVENT)

    page = _staff().get("/webhooks", **HTML)

    assert page.status_code == 200
    assert "https://hooks.example.com/in" in page.content.decode()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.django_db
def test_webhooks_page_shows_error_codes_never_the_messages_naming_internal_addresses(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The guard's refusal says what an internal name resolves to; a failed connection
    names the pinned address it tried. Staff see the code; the message is in the admin."""
    WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hook", event="blocked.event")
    WebhookEndpoint.objects.create(
        url=f"http://127.0.0.1:{_closed_port()}/hook", event="refused.event"
    )
    with webhook_settings(MAX_ATTEMPTS=1, BACKOFF_BASE=0.01, BACKOFF_CAP=0.05):
        with django_capture_on_commit_callbacks(execute=True):
            WebhookManager().fire_sync("blocked.event", {})
        with (
            webhook_settings(ALLOWED_NETWORKS=["127.0.0.0/8"], CONNECT_TIMEOUT=1.0),
            django_capture_on_commit_callbacks(execute=True),
        ):
            WebhookManager().fire_sync("refused.event", {})
    blocked = WebhookDelivery.objects.get(event="blocked.event")
    refused = WebhookDelivery.objects.get(event="refused.event")
    assert "non-public address" in blocked.error
    assert "127.0.0.1" in refused.error

    html = _staff().get("/webhooks", **HTML).content.decode()

    log = html.split("<h3>Delivery log", 1)[1].split("<h3>Received", 1)[0]
    assert "failed: <code>unsafe_url</code>" in log
    assert "failed: <code>connection_error</code>" in log
    for message in (blocked.error, refused.error):
        for fragment in (message, message.split(": ", 1)[1][:40]):
            assert fragment not in html
    assert "127.0.0.1" not in log and "non-public" not in log


@pytest.mark.django_db
def test_webhooks_page_shows_a_failed_answer_as_its_http_status_code() -> None:
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event=EVENT)
    WebhookDelivery.objects.create(
        endpoint=endpoint, event=EVENT, status_code=503, error="HTTP 503", attempt=1
    )

    html = _staff().get("/webhooks", **HTML).content.decode()

    assert "retrying: <code>http_503</code>" in html


# -- the receiver ----------------------------------------------------------------------------
@pytest.mark.django_db
def test_receiver_accepts_a_request_signed_like_a_delivery() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body)

    response = _post_to_receiver(Client(enforce_csrf_checks=True), body, headers)

    assert response.status_code == 204
    row = ReceivedWebhook.objects.get()
    assert row.signature_valid and row.replay_proof_valid
    assert row.event == EVENT and row.webhook_id == headers["X-Webhook-Id"]
    assert row.body == body.decode()


@pytest.mark.django_db
def test_receiver_refuses_a_wrong_signature_with_401() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body, secret="not-the-demo-secret")
    assert verify_signature("not-the-demo-secret", body, headers["X-Webhook-Signature"])

    response = _post_to_receiver(Client(), body, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_refuses_a_body_changed_after_signing_with_401() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body)
    tampered = b'{"event":"user.registered","data":{"user_id":1}}'

    response = _post_to_receiver(Client(), tampered, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_refuses_a_request_without_signature_with_401_storing_nothing() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = webhook_headers(EVENT, body, None, "f" * 32, int(time.time()))
    assert "X-Webhook-Signature" not in headers

    response = _post_to_receiver(Client(), body, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_refuses_a_post_with_no_webhook_headers_at_all_storing_nothing() -> None:
    response = Client().post(
        "/webhooks/receiver", b'{"event":"user.registered"}', content_type="application/json"
    )

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_refuses_a_body_signature_without_the_replay_proof_one_with_401() -> None:
    """The body signature alone can be replayed forever: a time-bound one (the Standard
    Webhooks ``webhook-signature`` or ``X-Webhook-Signature-V2``) is required too."""
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body)
    del headers["X-Webhook-Signature-V2"]
    del headers["webhook-signature"]

    response = _post_to_receiver(Client(), body, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_with_no_secret_configured_refuses_even_a_request_signed_with_it() -> None:
    """An HMAC under an empty key is anyone's to compute."""
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body, secret="")
    headers["X-Webhook-Signature"] = sign("", body)
    headers["X-Webhook-Signature-V2"] = sign_v2(
        "", headers["X-Webhook-Id"], int(headers["X-Webhook-Timestamp"]), body
    )

    with override_settings(DEMO_WEBHOOK_SECRET=""):
        response = _post_to_receiver(Client(), body, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_refuses_a_replayed_request_with_a_stale_timestamp_with_401() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body, timestamp=int(time.time()) - 3600)

    # The body signature alone still matches: only the replay-proof check catches it.
    assert verify_signature(_secret(), body, headers["X-Webhook-Signature"])

    response = _post_to_receiver(Client(), body, headers)

    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_acknowledges_a_replayed_delivery_without_storing_it_twice() -> None:
    """A captured delivery posted again within the 300 s tolerance passes both
    signatures: the id is what tells it apart. It is answered 2xx (a receiver that
    refused repeats would make an honest sender retry them) and stored once."""
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body)

    first = _post_to_receiver(Client(), body, headers)
    replayed = _post_to_receiver(Client(), body, headers)

    assert first.status_code == 204 and replayed.status_code == 204
    row = ReceivedWebhook.objects.get()
    assert row.webhook_id == headers["X-Webhook-Id"]


@pytest.mark.django_db
def test_receiver_stores_a_retry_of_one_delivery_once() -> None:
    """A sender's retry: the same id, a new timestamp and V2 signature."""
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    now = int(time.time())

    first = _post_to_receiver(Client(), body, _signed(body, timestamp=now - 90))
    retry = _post_to_receiver(Client(), body, _signed(body, timestamp=now))

    assert first.status_code == 204 and retry.status_code == 204
    assert ReceivedWebhook.objects.count() == 1


@pytest.mark.django_db
def test_receiver_stores_two_deliveries_with_different_ids() -> None:
    body = b'{"event":"user.registered","data":{"user_id":41}}'

    _post_to_receiver(Client(), body, _signed(body, webhook_id="1" * 32))
    _post_to_receiver(Client(), body, _signed(body, webhook_id="2" * 32))

    assert sorted(ReceivedWebhook.objects.values_list("webhook_id", flat=True)) == [
        "1" * 32,
        "2" * 32,
    ]


@pytest.mark.django_db
def test_receiver_refuses_an_id_too_long_to_store_whole_with_400() -> None:
    """Cut to the column's 64 characters, two ids could collide and one delivery be
    acknowledged as a repeat of the other."""
    body = b'{"event":"user.registered","data":{"user_id":41}}'

    response = _post_to_receiver(Client(), body, _signed(body, webhook_id="7" * 65))

    assert response.status_code == 400
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db
def test_receiver_pruning_keeps_every_id_that_could_still_be_replayed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the latest rows are kept, but a flood of fresh deliveries (signups are open
    to anyone) cannot push out an id still inside the replay tolerance."""
    monkeypatch.setattr(demo_views, "KEEP_RECEIVED", 2)
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    victim = _signed(body, webhook_id="0" * 32)
    _post_to_receiver(Client(), body, victim)
    original = ReceivedWebhook.objects.get(webhook_id="0" * 32).pk
    for n in range(1, 4):
        _post_to_receiver(Client(), body, _signed(body, webhook_id=str(n) * 32))

    replayed = _post_to_receiver(Client(), body, victim)

    assert replayed.status_code == 204
    # Still the first row: the replay was recognised, not stored as new after a prune.
    kept = ReceivedWebhook.objects.filter(webhook_id="0" * 32).values_list("pk", flat=True)
    assert list(kept) == [original]
    # Once older than the tolerance, rows beyond the latest ones do go.
    ReceivedWebhook.objects.update(received_at=timezone.now() - timedelta(minutes=10))
    _post_to_receiver(Client(), body, _signed(body, webhook_id="9" * 32))
    assert ReceivedWebhook.objects.count() == 2


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_copies_of_one_delivery_arriving_at_once_are_stored_once(live_server: Any) -> None:
    """Concurrent copies: the unique index decides, each copy is acknowledged. (On the
    tests' in-memory SQLite, shared between threads, a concurrent write fails with
    "table is locked" instead of waiting: PostgreSQL only.)"""
    body = b'{"event":"user.registered","data":{"user_id":41}}'
    headers = _signed(body)
    url = f"{live_server.url}/webhooks/receiver"
    start = threading.Barrier(6)
    statuses: list[int] = []

    def post() -> None:
        start.wait()
        statuses.append(requests.post(url, data=body, headers=headers, timeout=20).status_code)

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses == [204] * 6
    assert ReceivedWebhook.objects.count() == 1


@pytest.mark.django_db
def test_receiver_answers_only_post() -> None:
    assert Client().get("/webhooks/receiver", **HTML).status_code == 405
    assert not ReceivedWebhook.objects.exists()


# -- signup validation -----------------------------------------------------------------------
@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every delivery attempt DeliverWebhookJob makes (url, body, secret, tenant current
    while it runs), answered as delivered without any network."""
    attempts: list[dict[str, Any]] = []

    def recording(
        url: str, event: str, body: bytes, secret: str | None, delivery_id: str
    ) -> AttemptResult:
        attempts.append(
            {
                "url": url,
                "event": event,
                "body": body,
                "secret": secret,
                "tenant": current_tenant_id(),
            }
        )
        return AttemptResult(True, 200, None, 1, "", True)

    monkeypatch.setattr(webhook_tasks, "deliver_once", recording)
    return attempts


@pytest.fixture
def watched_endpoint(db: Any) -> WebhookEndpoint:
    """A user.registered endpoint: any delivery to it would be recorded by ``sent``."""
    return WebhookEndpoint.objects.create(
        url="https://hooks.example.com/in", event=EVENT, secret=_secret()
    )


def _nothing_sent(sent: list[dict[str, Any]]) -> None:
    assert sent == []
    assert not WebhookDelivery.objects.exists()


@pytest.mark.django_db
def test_signup_form_is_shown_with_a_csrf_token() -> None:
    response = Client(enforce_csrf_checks=True).get("/signup", **HTML)
    assert response.status_code == 200
    assert response.cookies[COOKIE].value
    assert re.search(
        r'name="(?:_token|csrfmiddlewaretoken)" value="[^"]+"', response.content.decode()
    )


@pytest.mark.django_db
@pytest.mark.parametrize("email", ["not-an-email", "", "two@@example.com"])
def test_signup_with_an_invalid_email_is_a_422_creating_nobody_and_sending_nothing(
    email: str,
    sent: list[dict[str, Any]],
    watched_endpoint: WebhookEndpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = _signup(Client(enforce_csrf_checks=True), email)

    assert response.status_code == 422
    html = response.content.decode()
    assert "Enter a valid email address." in html or "This field is required." in html
    assert not User.objects.exists()
    assert queued == []
    _nothing_sent(sent)


@pytest.mark.django_db
def test_signup_with_an_existing_email_answers_as_a_new_one_creating_nobody_and_firing_nothing(
    user: Any,
    sent: list[dict[str, Any]],
    watched_endpoint: WebhookEndpoint,
    django_capture_on_commit_callbacks: Any,
    mailoutbox: list[Any],
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = _signup(Client(enforce_csrf_checks=True), user.email.upper())

    assert response.status_code == 302 and response["Location"] == "/signup/sent"
    assert list(User.objects.values_list("pk", flat=True)) == [user.pk]
    assert queued == []
    _nothing_sent(sent)
    # The owner hears of it, at the account's own address; nobody else learns anything.
    assert [m.to for m in mailoutbox] == [[user.email]]
    assert "tried to sign up" in mailoutbox[0].subject


@pytest.mark.django_db
@pytest.mark.parametrize("weak", ["123", "12345678", "password", "weak.signup"])
def test_signup_with_a_weak_password_is_a_422_creating_nobody_and_sending_nothing(
    weak: str,
    sent: list[dict[str, Any]],
    watched_endpoint: WebhookEndpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = _signup(Client(enforce_csrf_checks=True), "weak.signup@example.com", weak)

    assert response.status_code == 422
    html = response.content.decode()
    assert 'class="af-field-error"' in html
    assert 'value="weak.signup@example.com"' in html  # the email comes back
    assert re.search(r'<input type="password" name="password"[^>]*>', html)
    assert f'value="{weak}"' not in html  # the password never
    assert not User.objects.exists()
    assert queued == []
    _nothing_sent(sent)


@pytest.mark.django_db
def test_signup_without_a_csrf_token_is_a_403_creating_nobody_and_sending_nothing(
    sent: list[dict[str, Any]],
    watched_endpoint: WebhookEndpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = Client(enforce_csrf_checks=True)
    fields = {"email": "forged@example.com", "password": GOOD_PASSWORD}
    with django_capture_on_commit_callbacks(execute=True) as queued:
        # No cookie, no token: a cross-site form post.
        bare = client.post("/signup", fields, **HTML)
        # The cookie from showing the form, but no token echoed in the post.
        client.get("/signup", **HTML)
        tokenless = client.post("/signup", fields, **HTML)
        # A token that is not the cookie's.
        forged = client.post("/signup", {**fields, "_token": "x" * 43}, **HTML)

    assert bare.status_code == 403
    assert tokenless.status_code == 403
    assert forged.status_code == 403
    assert not User.objects.exists()
    assert queued == []
    _nothing_sent(sent)


@pytest.mark.django_db
def test_a_valid_signup_is_delivered_to_the_watched_endpoint(
    sent: list[dict[str, Any]],
    watched_endpoint: WebhookEndpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The counterpart of the refused signups above: the same set-up does deliver."""
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = _signup(Client(enforce_csrf_checks=True), "counterpart@example.com")

    assert response.status_code == 302 and response["Location"] == "/signup/sent"
    user = User.objects.get(email="counterpart@example.com")
    assert len(queued) == 1
    assert [(a["url"], a["event"], a["secret"]) for a in sent] == [
        (watched_endpoint.url, EVENT, _secret())
    ]
    assert json.loads(sent[0]["body"]) == {"event": EVENT, "data": {"user_id": user.pk}}
    assert WebhookDelivery.objects.get().success


# -- rolled-back registrations ---------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_user_registered_sent_in_a_rolled_back_transaction_sends_nothing(
    sent: list[dict[str, Any]], watched_endpoint: WebhookEndpoint
) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        user = User.objects.create_user("rolled.back@example.com", GOOD_PASSWORD)
        user_registered.send(sender=User, user=user, request=None)
        raise RuntimeError("the registration fails after the event")

    assert not User.objects.exists()
    _nothing_sent(sent)
    # The same event, committed this time, is delivered: the rollback is what stopped it.
    with transaction.atomic():
        user = User.objects.create_user("committed@example.com", GOOD_PASSWORD)
        user_registered.send(sender=User, user=user, request=None)
    assert [json.loads(a["body"]) for a in sent] == [{"event": EVENT, "data": {"user_id": user.pk}}]


@pytest.mark.django_db(transaction=True)
def test_a_signup_failing_inside_its_transaction_sends_nothing(
    sent: list[dict[str, Any]], watched_endpoint: WebhookEndpoint
) -> None:
    """Another listener of ``user_registered`` fails after the webhook one queued its
    delivery: the signup's transaction rolls back, and the delivery goes with it."""

    queued_before_failing: list[int] = []

    def failing_listener(sender: Any, user: Any, **kwargs: Any) -> None:
        queued_before_failing.append(len(connection.run_on_commit))
        raise RuntimeError("welcome mail failed")

    user_registered.connect(failing_listener, dispatch_uid="test-demo-failing-listener")
    try:
        client = Client(enforce_csrf_checks=True, raise_request_exception=False)
        response = _signup(client, "half.done@example.com")
    finally:
        user_registered.disconnect(dispatch_uid="test-demo-failing-listener")

    assert response.status_code == 500
    assert queued_before_failing == [1]  # the webhook listener had queued its delivery
    assert not User.objects.exists()
    _nothing_sent(sent)


# -- the landing page and seed_demo ----------------------------------------------------------
@pytest.mark.django_db
def test_landing_page_links_webhooks_and_signup_saying_what_to_watch_for() -> None:
    html = Client().get("/", **HTML).content.decode()

    items = [
        li
        for li in re.findall(r"<li>.*?</li>", html, re.S)
        if 'href="/webhooks"' in li and 'href="/signup"' in li
    ]
    assert len(items) == 1, html
    item = items[0]
    assert 'href="/signup"' in item
    assert "user.registered" in item
    assert "receiver" in item and "signed" in item


@pytest.mark.django_db
def test_seed_demo_creates_the_user_registered_endpoint_once() -> None:
    with override_settings(DEMO_BASE_URL="http://demo.example.test:8123/"):
        call_command("seed_demo", stdout=StringIO())
        call_command("seed_demo", stdout=StringIO())

    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.event == EVENT
    assert endpoint.url == "http://demo.example.test:8123/webhooks/receiver"
    assert endpoint.secret == _secret()
    assert endpoint.active is True


@pytest.mark.django_db
def test_seed_demo_restores_the_endpoint_secret_and_reactivates_it() -> None:
    with override_settings(DEMO_BASE_URL="http://demo.example.test:8123"):
        call_command("seed_demo", stdout=StringIO())
        WebhookEndpoint.objects.update(secret="changed", active=False)
        call_command("seed_demo", stdout=StringIO())

    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret == _secret() and endpoint.active is True


# -- tenancy: a job runs under the tenant that fired it --------------------------------------
@pytest.mark.django_db(transaction=True)
def test_webhook_fired_under_a_tenant_is_delivered_under_that_tenant(
    sent: list[dict[str, Any]],
) -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event="order.paid")
    assert current_tenant_id() == 1

    with as_tenant(2):
        WebhookManager().fire_sync("order.paid", {"id": 1})

    assert [a["tenant"] for a in sent] == [2]
    assert current_tenant_id() == 1


@pytest.mark.django_db(transaction=True)
def test_webhook_fired_under_a_tenant_and_committed_after_leaving_it_keeps_the_tenant(
    receiver: Any, loopback_allowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real delivery, wrapped: the job published at the commit (under tenant 1)
    still runs under tenant 2, the tenant current when the webhook was fired."""
    seen: list[Any] = []
    real: Callable[..., AttemptResult] = webhook_tasks.deliver_once

    def recording(*args: Any, **kwargs: Any) -> AttemptResult:
        seen.append(current_tenant_id())
        return real(*args, **kwargs)

    monkeypatch.setattr(webhook_tasks, "deliver_once", recording)
    WebhookEndpoint.objects.create(url=receiver.url, event="order.paid", secret="s")

    with transaction.atomic():
        with as_tenant(2):
            WebhookManager().fire_sync("order.paid", {"id": 1})
        assert current_tenant_id() == 1
        assert seen == []

    assert seen == [2]
    assert len(receiver.wait_for(1)) == 1
    assert WebhookDelivery.objects.get().success


@pytest.mark.django_db(transaction=True)
def test_webhooks_fired_under_two_tenants_in_one_transaction_keep_their_own(
    sent: list[dict[str, Any]],
) -> None:
    WebhookEndpoint.objects.create(url="https://hooks.example.com/in", event="order.paid")

    with transaction.atomic():
        with as_tenant(2):
            WebhookManager().fire_sync("order.paid", {"id": 2})
        WebhookManager().fire_sync("order.paid", {"id": 1})

    assert [(json.loads(a["body"])["data"]["id"], a["tenant"]) for a in sent] == [(2, 2), (1, 1)]


@pytest.mark.django_db(transaction=True)
def test_user_registered_under_a_tenant_is_delivered_under_that_tenant(
    sent: list[dict[str, Any]], watched_endpoint: WebhookEndpoint
) -> None:
    with transaction.atomic(), as_tenant(2):
        user = User.objects.create_user("tenant.two@example.com", GOOD_PASSWORD)
        user_registered.send(sender=User, user=user, request=None)

    assert [a["tenant"] for a in sent] == [2]
    assert json.loads(sent[0]["body"]) == {"event": EVENT, "data": {"user_id": user.pk}}


@pytest.mark.django_db(transaction=True)
def test_fan_out_fired_under_a_tenant_delivers_every_job_under_that_tenant(
    sent: list[dict[str, Any]],
) -> None:
    count = FAN_OUT_THRESHOLD + 2
    WebhookEndpoint.objects.bulk_create(
        WebhookEndpoint(url=f"https://hooks{n}.example.com/in", event="order.paid", secret="s")
        for n in range(count)
    )

    with transaction.atomic(), as_tenant(2):
        WebhookManager().fire_sync("order.paid", {"id": 1})

    assert [a["tenant"] for a in sent] == [2] * count
    assert WebhookDelivery.objects.filter(success=True).count() == count
