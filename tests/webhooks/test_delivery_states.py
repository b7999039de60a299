"""What happens to a delivery, state by state (eager Celery: retries run inline).

- fired: one DeliverWebhookJob per active subscribed endpoint, queued once the
  transaction commits; the caller returns before anything is sent;
- endpoint disabled or deleted after queuing, before delivery: skipped (no request, no row);
- 2xx: delivered (one success row with the status, duration, request and answer bodies);
- non-2xx (redirects included, never followed), connection error, timeout: retried,
  MAX_ATTEMPTS attempts in total, one row each, only the last one final, the same
  X-Webhook-Id and a valid signature on every attempt;
- a URL the private-address guard refuses: one final row, no connection, no retry.

Plus: an endpoint without a secret gets unsigned requests (and a warning is logged),
DELIVERY_LOG=False keeps no rows, the exact headers, and the retry backoff."""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any

import pytest
from django.db import transaction

from appframework_webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    schedule,
    verify_signature,
    verify_webhook,
)
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.schedule import backoff

from .conftest import webhook_settings
from .receiver import Receiver

LOGGER = "appframework.webhooks"
SECRET = "s3cret"
EVENT = "invoice.paid"
SIGNATURE_HEADERS = {"X-Webhook-Signature", "X-Webhook-Signature-V2"}


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


def _endpoint(url: str, *, secret: str | None = SECRET, **extra: Any) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(url=url, event=EVENT, secret=secret, **extra)


def _fire(capture: Any, data: dict[str, Any] | None = None) -> list[str]:
    """Fire EVENT and run the after-commit callbacks (the deliveries) at once."""
    with capture(execute=True):
        return WebhookManager().fire_sync(EVENT, data if data is not None else {"invoice": 1})


def _rows() -> list[WebhookDelivery]:
    return list(WebhookDelivery.objects.order_by("attempt", "id"))


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- fired ---------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_fired_queues_one_job_per_active_subscribed_endpoint_and_returns_before_any_hit(
    receiver: Receiver, loopback_allowed: None, monkeypatch: Any
) -> None:
    first = _endpoint(f"{receiver.url}/first")
    second = _endpoint(f"{receiver.url}/second")
    _endpoint(f"{receiver.url}/inactive", active=False)
    WebhookEndpoint.objects.create(url=f"{receiver.url}/other", event="invoice.void")
    queued: list[tuple[Any, ...]] = []
    real = webhook_tasks.DeliverWebhookJob.apply_async

    def spy(*args: Any, **kwargs: Any) -> Any:
        queued.append(tuple(kwargs["args"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(webhook_tasks.DeliverWebhookJob, "apply_async", spy)
    receiver.delay = 0.5
    with transaction.atomic():
        started = time.monotonic()
        ids = WebhookManager().fire_sync(EVENT, {"invoice": 1})
        elapsed = time.monotonic() - started
        assert receiver.hits == []
        assert queued == []
    assert elapsed < 0.5
    assert sorted(job[0] for job in queued) == sorted([first.pk, second.pk])
    assert sorted(job[3] for job in queued) == sorted(ids)
    assert {job[1] for job in queued} == {EVENT}
    assert len({job[2] for job in queued}) == 1
    assert sorted(hit.path for hit in receiver.wait_for(2)) == ["/hook/first", "/hook/second"]


# -- skipped ---------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("change", ["disabled", "deleted"])
def test_an_endpoint_disabled_or_deleted_after_queuing_is_skipped(
    change: str,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
    caplog: Any,
) -> None:
    gone = _endpoint(f"{receiver.url}/gone")
    kept = _endpoint(f"{receiver.url}/kept")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        WebhookManager().fire_sync(EVENT, {"invoice": 1})
    assert len(callbacks) == 1
    if change == "disabled":
        WebhookEndpoint.objects.filter(pk=gone.pk).update(active=False)
    else:
        WebhookEndpoint.objects.filter(pk=gone.pk).delete()
    caplog.set_level(logging.INFO, logger=LOGGER)
    for callback in callbacks:
        callback()
    hits = receiver.wait_for(1)
    assert [hit.path for hit in hits] == ["/hook/kept"]
    assert [row.endpoint_id for row in _rows()] == [kept.pk]
    assert any("skipped" in r.getMessage() for r in caplog.records if r.name == LOGGER)


@pytest.mark.django_db
def test_an_endpoint_disabled_between_attempts_gets_no_further_attempt(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    endpoint = _endpoint(receiver.url)
    receiver.respond = lambda n: (500, {}, b"down")
    real = webhook_tasks.deliver_once

    def deliver_then_disable(*args: Any, **kwargs: Any) -> Any:
        outcome = real(*args, **kwargs)
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(active=False)
        return outcome

    monkeypatch.setattr(webhook_tasks, "deliver_once", deliver_then_disable)
    _fire(django_capture_on_commit_callbacks)
    assert len(receiver.wait_for(2, timeout=0.3)) == 1
    assert [(row.attempt, row.final) for row in _rows()] == [(1, False)]


# -- delivered -------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("status", [200, 201, 204, 299])
def test_a_2xx_answer_is_delivered_with_one_success_row(
    status: int,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    endpoint = _endpoint(receiver.url)
    answer = b"" if status == 204 else b'{"received":true}'
    receiver.respond = lambda n: (status, {"Content-Type": "application/json"}, answer)
    (delivery_id,) = _fire(django_capture_on_commit_callbacks, {"invoice": 42})
    (hit,) = receiver.wait_for(1)
    (row,) = _rows()
    assert row.endpoint_id == endpoint.pk
    assert row.event == EVENT
    assert row.success is True
    assert row.final is False
    assert row.attempt == 1
    assert row.status_code == status
    assert row.error is None
    assert row.delivery_id == delivery_id == hit.headers["X-Webhook-Id"]
    assert row.duration_ms >= 0
    assert row.request_body.encode("utf-8") == hit.body
    assert json.loads(row.request_body) == {"event": EVENT, "data": {"invoice": 42}}
    assert row.response_body == answer.decode()


@pytest.mark.django_db
def test_the_duration_of_an_attempt_is_recorded_in_milliseconds(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    receiver.delay = 0.1
    _fire(django_capture_on_commit_callbacks)
    (row,) = _rows()
    assert row.success
    assert 90 <= row.duration_ms < 1000


@pytest.mark.django_db
def test_the_answer_is_kept_up_to_the_default_response_body_limit(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (200, {}, b"a" * 10240)
    _fire(django_capture_on_commit_callbacks)
    (row,) = _rows()
    assert row.success
    assert row.response_body == "a" * 2000


@pytest.mark.django_db
@pytest.mark.parametrize("limit", [0, 100, 5000])
def test_the_answer_is_kept_up_to_a_configured_response_body_limit(
    limit: int,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (200, {}, b"b" * 10240)
    with webhook_settings(RESPONSE_BODY_LIMIT=limit):
        _fire(django_capture_on_commit_callbacks)
    (row,) = _rows()
    assert row.success
    assert row.response_body == "b" * limit


# -- retried ---------------------------------------------------------------------------------------


def _assert_retried_five_times(receiver: Receiver, delivery_id: str, secret: str = SECRET) -> None:
    rows = _rows()
    assert [row.attempt for row in rows] == [1, 2, 3, 4, 5]
    assert [row.final for row in rows] == [False, False, False, False, True]
    assert not any(row.success for row in rows)
    assert {row.delivery_id for row in rows} == {delivery_id}
    assert all(row.error for row in rows)
    hits = receiver.hits
    assert len(hits) == 5
    assert {hit.headers["X-Webhook-Id"] for hit in hits} == {delivery_id}
    assert len({hit.body for hit in hits}) == 1
    for hit in hits:
        assert verify_signature(secret, hit.body, hit.headers["X-Webhook-Signature"])
        assert verify_webhook(secret, hit.headers, hit.body)


@pytest.mark.django_db
@pytest.mark.parametrize("status", [400, 404, 500, 503])
def test_a_non_2xx_answer_is_retried_up_to_five_attempts(
    status: int,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (status, {}, b"nope")
    (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    _assert_retried_five_times(receiver, delivery_id)
    rows = _rows()
    assert {row.status_code for row in rows} == {status}
    assert {row.error for row in rows} == {f"HTTP {status}"}
    assert {row.response_body for row in rows} == {"nope"}


@pytest.mark.django_db
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_not_followed_and_is_retried(
    status: int,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    moved = f"{receiver.url}/moved"
    receiver.respond = lambda n: (status, {"Location": moved}, b"")
    (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    _assert_retried_five_times(receiver, delivery_id)
    assert {hit.path for hit in receiver.hits} == {"/hook"}
    rows = _rows()
    assert {row.status_code for row in rows} == {status}
    assert all("redirects are not followed" in row.error and moved in row.error for row in rows)


@pytest.mark.django_db
def test_a_long_error_is_clipped_to_the_error_column(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    moved = f"{receiver.url}/{'x' * 3000}"
    receiver.respond = lambda n: (302, {"Location": moved}, b"")
    with webhook_settings(MAX_ATTEMPTS=1):
        _fire(django_capture_on_commit_callbacks)
    (row,) = _rows()
    assert row.final
    assert len(row.error) == 2000
    assert row.error.startswith("HTTP 302: redirects are not followed")
    assert row.error.endswith("…")


@pytest.mark.django_db
@pytest.mark.parametrize("status", [200, 500])
def test_an_answer_containing_nul_bytes_is_still_logged(
    status: int,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """A receiver may answer anything (a binary or compressed body): the attempt is
    logged and retried like any other, whatever the database accepts in a text column
    (PostgreSQL refuses NUL characters)."""
    _endpoint(receiver.url)
    receiver.respond = lambda n: (status, {}, b"ok\x00\x1f\x8b\x08binary")
    with webhook_settings(MAX_ATTEMPTS=2):
        _fire(django_capture_on_commit_callbacks)
    rows = _rows()
    if status == 200:
        assert [(row.attempt, row.success) for row in rows] == [(1, True)]
    else:
        assert [(row.attempt, row.final) for row in rows] == [(1, False), (2, True)]
        assert len(receiver.hits) == 2
    assert all(row.response_body.startswith("ok") for row in rows)
    assert all(row.response_body.endswith("binary") for row in rows)


@pytest.mark.django_db
def test_a_connection_error_is_retried_up_to_five_attempts(
    loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(f"http://127.0.0.1:{_closed_port()}/hook")
    (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    rows = _rows()
    assert [row.attempt for row in rows] == [1, 2, 3, 4, 5]
    assert [row.final for row in rows] == [False, False, False, False, True]
    assert {row.delivery_id for row in rows} == {delivery_id}
    assert {row.status_code for row in rows} == {None}
    assert all(row.error.startswith("ConnectionError") for row in rows)
    assert not any(row.success for row in rows)


@pytest.mark.django_db
def test_a_timeout_is_retried_up_to_five_attempts(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    receiver.delay = 0.4
    with webhook_settings(READ_TIMEOUT=0.1):
        (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    _assert_retried_five_times(receiver, delivery_id)
    rows = _rows()
    assert {row.status_code for row in rows} == {None}
    assert all("Timeout" in row.error for row in rows)


@pytest.mark.django_db
def test_a_receiver_failing_twice_then_answering_200_is_delivered_on_the_third_attempt(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (503, {}, b"busy") if n < 2 else (200, {}, b"ok")
    (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    rows = _rows()
    assert [(row.attempt, row.success, row.final) for row in rows] == [
        (1, False, False),
        (2, False, False),
        (3, True, False),
    ]
    assert [row.status_code for row in rows] == [503, 503, 200]
    hits = receiver.hits
    assert len(hits) == 3
    assert {hit.headers["X-Webhook-Id"] for hit in hits} == {delivery_id}


@pytest.mark.django_db
def test_max_attempts_setting_bounds_the_attempts(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (500, {}, b"no")
    with webhook_settings(MAX_ATTEMPTS=2):
        _fire(django_capture_on_commit_callbacks)
    assert [(row.attempt, row.final) for row in _rows()] == [(1, False), (2, True)]
    assert len(receiver.hits) == 2


@pytest.mark.django_db
def test_a_final_failure_is_logged_as_a_warning(
    receiver: Receiver,
    loopback_allowed: None,
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (500, {}, b"no")
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with webhook_settings(MAX_ATTEMPTS=1):
        (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    warnings = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]
    assert any(delivery_id in r.getMessage() and "HTTP 500" in r.getMessage() for r in warnings)


# -- refused by the private-address guard ------------------------------------------------------------


@pytest.mark.django_db
def test_an_unsafe_url_gets_one_final_row_no_connection_and_no_retry(
    receiver: Receiver, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Default settings: loopback (the receiver's 127.0.0.1) is refused."""
    _endpoint(receiver.url)
    waits: list[int] = []
    monkeypatch.setattr(webhook_tasks, "backoff", lambda retries: waits.append(retries) or 0.0)
    (delivery_id,) = _fire(django_capture_on_commit_callbacks)
    assert receiver.wait_for(1, timeout=0.2) == []
    (row,) = _rows()
    assert row.final is True
    assert row.success is False
    assert row.attempt == 1
    assert row.status_code is None
    assert row.delivery_id == delivery_id
    assert row.error.startswith("UnsafeWebhookUrlError")
    assert waits == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/hook", "http://user:pw@example.com/hook", "not a url", ""],
    ids=["ftp", "credentials", "garbage", "empty"],
)
def test_a_url_refused_before_any_lookup_is_one_final_row(
    url: str, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no DNS lookup expected")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    _endpoint(url)
    _fire(django_capture_on_commit_callbacks)
    (row,) = _rows()
    assert row.final and not row.success and row.attempt == 1
    assert row.error.startswith("UnsafeWebhookUrlError")


# -- unsigned, no log, headers -----------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("secret", [None, ""], ids=["none", "empty"])
def test_an_endpoint_without_a_secret_is_sent_unsigned_with_a_warning(
    secret: str | None,
    receiver: Receiver,
    loopback_allowed: None,
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url, secret=secret)
    caplog.set_level(logging.WARNING, logger=LOGGER)
    _fire(django_capture_on_commit_callbacks)
    (hit,) = receiver.wait_for(1)
    assert SIGNATURE_HEADERS.isdisjoint(hit.headers)
    assert "X-Webhook-Id" in hit.headers
    (row,) = _rows()
    assert row.success
    warnings = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]
    assert any("unsigned" in r.getMessage() and receiver.url in r.getMessage() for r in warnings)


@pytest.mark.django_db
def test_an_endpoint_with_a_secret_sends_no_unsigned_warning(
    receiver: Receiver,
    loopback_allowed: None,
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    caplog.set_level(logging.WARNING, logger=LOGGER)
    _fire(django_capture_on_commit_callbacks)
    (hit,) = receiver.wait_for(1)
    assert set(hit.headers) >= SIGNATURE_HEADERS
    assert not [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


@pytest.mark.django_db
def test_delivery_log_off_delivers_but_keeps_no_rows(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(f"{receiver.url}/ok")
    _endpoint(f"{receiver.url}/failing")

    def answer(n: int) -> tuple[int, dict[str, str], bytes]:
        return (200, {}, b"") if receiver.hits[n].path == "/hook/ok" else (500, {}, b"")

    receiver.respond = answer
    with webhook_settings(DELIVERY_LOG=False):
        _fire(django_capture_on_commit_callbacks)
    paths = sorted(hit.path for hit in receiver.hits)
    assert paths == ["/hook/failing"] * 5 + ["/hook/ok"]
    assert WebhookDelivery.objects.count() == 0


@pytest.mark.django_db
def test_the_request_carries_exactly_the_webhook_headers(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver.url)
    (delivery_id,) = _fire(django_capture_on_commit_callbacks, {"invoice": 5})
    now = time.time()
    (hit,) = receiver.wait_for(1)
    assert hit.method == "POST"
    assert hit.headers["Content-Type"] == "application/json"
    assert hit.headers["X-Webhook-Event"] == EVENT
    assert hit.headers["X-Webhook-Id"] == delivery_id
    assert abs(int(hit.headers["X-Webhook-Timestamp"]) - now) <= 5
    webhook_headers = {name for name in hit.headers if name.lower().startswith("x-webhook-")}
    assert webhook_headers == {
        "X-Webhook-Event",
        "X-Webhook-Id",
        "X-Webhook-Timestamp",
        "X-Webhook-Signature",
        "X-Webhook-Signature-V2",
    }
    assert hit.headers["X-Webhook-Signature-V2"].startswith("v2=")
    assert verify_signature(SECRET, hit.body, hit.headers["X-Webhook-Signature"])
    assert verify_webhook(SECRET, hit.headers, hit.body)
    assert hit.body == b'{"event":"invoice.paid","data":{"invoice":5}}'
    assert int(hit.headers["Content-Length"]) == len(hit.body)


# -- backoff -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retries", "expected"),
    [(0, 10.0), (1, 20.0), (2, 40.0), (3, 80.0), (4, 160.0), (5, 320.0), (6, 600.0), (30, 600.0)],
)
def test_backoff_is_base_times_two_to_the_retry_capped(
    retries: int, expected: float, monkeypatch: Any
) -> None:
    bounds: list[tuple[float, float]] = []

    def middle(low: float, high: float) -> float:
        bounds.append((low, high))
        return 1.0

    monkeypatch.setattr(schedule.random, "uniform", middle)
    assert backoff(retries) == pytest.approx(expected)
    assert bounds == [(0.8, 1.2)]


def test_backoff_jitter_is_within_twenty_percent(monkeypatch: Any) -> None:
    monkeypatch.setattr(schedule.random, "uniform", lambda low, high: low)
    assert backoff(2) == pytest.approx(40.0 * 0.8)
    monkeypatch.setattr(schedule.random, "uniform", lambda low, high: high)
    assert backoff(2) == pytest.approx(40.0 * 1.2)
    assert backoff(50) == pytest.approx(600.0 * 1.2)


def test_backoff_draws_stay_within_bounds_and_the_largest_within_the_cap() -> None:
    for retries in range(12):
        expected = min(600.0, 10.0 * 2**retries)
        draws = [backoff(retries) for _ in range(200)]
        assert all(expected * 0.8 <= d <= expected * 1.2 for d in draws)
        assert len(set(draws)) > 1
    assert max(backoff(r) for r in range(40) for _ in range(50)) <= 600.0 * 1.2


def test_backoff_follows_the_settings() -> None:
    with webhook_settings(BACKOFF_BASE=2.0, BACKOFF_CAP=5.0):
        assert 1.6 <= backoff(0) <= 2.4
        assert 3.2 <= backoff(1) <= 4.8
        assert 4.0 <= backoff(2) <= 6.0
        assert max(backoff(10) for _ in range(200)) <= 5.0 * 1.2


@pytest.mark.django_db
def test_each_retry_is_scheduled_with_the_backoff_of_its_retry_number(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _endpoint(receiver.url)
    receiver.respond = lambda n: (500, {}, b"")
    waits: list[int] = []
    real = webhook_tasks.backoff
    monkeypatch.setattr(webhook_tasks, "backoff", lambda r: waits.append(r) or real(r))
    _fire(django_capture_on_commit_callbacks)
    assert waits == [0, 1, 2, 3]


# -- the error's code ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (None, None, ""),
        ("HTTP 503", 503, "http_503"),
        ("HTTP 302: redirects are not followed (Location: http://10.0.0.5/)", 302, "http_302"),
        (
            "UnsafeWebhookUrlError: The webhook URL is not allowed: the host resolves to a "
            "non-public address.",
            None,
            "unsafe_url",
        ),
        (
            "ConnectTimeout: HTTPConnectionPool(host='10.0.0.5', port=80): timed out",
            None,
            "timeout",
        ),
        ("ReadTimeout: HTTPConnectionPool(host='10.0.0.5', port=80): timed out", None, "timeout"),
        ("SoftTimeLimitExceeded: SoftTimeLimitExceeded()", None, "timeout"),
        ("SSLError: certificate verify failed for 10.0.0.5", None, "tls_error"),
        (
            "ConnectionError: HTTPConnectionPool(host='10.0.0.5', port=80): refused",
            None,
            "connection_error",
        ),
        ("RuntimeError: something about 10.0.0.5", None, "error"),
        ("no colon at all", None, "error"),
    ],
)
def test_error_code_names_the_outcome_without_the_message(
    error: str | None, status: int | None, code: str
) -> None:
    row = WebhookDelivery(event=EVENT, error=error, status_code=status)
    assert row.error_code == code
    assert "10.0.0.5" not in row.error_code


def test_deliver_webhook_job_has_max_attempts_5_by_default() -> None:
    from appframework_webhooks import DeliverWebhookJob

    assert DeliverWebhookJob.max_attempts == 5


def test_deliver_webhook_job_max_attempts_follows_the_setting(settings: Any) -> None:
    from appframework_webhooks import DeliverWebhookJob

    settings.APPFRAMEWORK = {**settings.APPFRAMEWORK, "WEBHOOKS": {"MAX_ATTEMPTS": 3}}
    assert DeliverWebhookJob.max_attempts == 3
