"""Firing webhooks: ``WebhookManager.fire_sync`` / ``fire``, ``fire_webhook`` and
``afire_webhook``.

One query finds the active endpoints subscribed to the exact event; the body
``{"event", "data"}`` is serialized once (compact JSON, DjangoJSONEncoder) and every
endpoint receives those very bytes; the jobs are queued when the surrounding transaction
commits (none if it rolls back); the caller gets the delivery ids back. First attempts
to 10 endpoints or more are queued as batch jobs of up to BATCH_SIZE; above 20 messages
a single fan-out job publishes them from a worker. A job that cannot be
queued is logged and reported through ``webhook_queue_failed``, never raised, and the
other endpoints still get theirs. A bad event name or data is a 422 before anything is
queued."""

from __future__ import annotations

import datetime
import decimal
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections, transaction
from django.test import RequestFactory

from appframework.exceptions import ValidationException
from appframework_webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    afire_webhook,
    fire_webhook,
    verify_signature,
    verify_webhook,
    webhook_queue_failed,
)
from appframework_webhooks import manager as manager_module
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.tasks import FAN_OUT_THRESHOLD, publish_jobs

from .conftest import webhook_settings
from .receiver import Receiver

LOGGER = "appframework.webhooks"
UUID_HEX = re.compile(r"^[0-9a-f]{32}$")


NOWHERE = "https://hooks.example.com/hook"


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


def _endpoint(receiver: Receiver | None, path: str, event: str = "order.paid", **extra: Any) -> Any:
    """An endpoint at ``<receiver>/<path>``; without a receiver, at an address that is
    never contacted (the test stops before anything is sent)."""
    extra.setdefault("secret", f"secret-{path}")
    base = receiver.url if receiver is not None else NOWHERE
    return WebhookEndpoint.objects.create(url=f"{base}/{path}", event=event, **extra)


class DeliverSpy:
    """Records every DeliverWebhookJob.apply_async call; passes it on unless told to fail
    for some endpoint ids."""

    def __init__(self, monkeypatch: Any, *, fail_for: set[int] | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail_for = fail_for or set()
        self.real = webhook_tasks.DeliverWebhookJob.apply_async
        monkeypatch.setattr(webhook_tasks.DeliverWebhookJob, "apply_async", self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        job_args = tuple(kwargs.get("args") or args[0])
        self.calls.append(job_args)
        if job_args[0] in self.fail_for:
            raise ConnectionError("broker unreachable")
        return self.real(*args, **kwargs)

    @property
    def endpoint_ids(self) -> list[int]:
        return [call[0] for call in self.calls]


def _published(monkeypatch: Any, task: Any) -> list[dict[str, Any]]:
    """The options of every ``task.apply_async`` call from now on; nothing is queued."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(task, "apply_async", lambda *args, **options: calls.append(options))
    return calls


@pytest.fixture
def deliver_spy(monkeypatch: Any) -> DeliverSpy:
    return DeliverSpy(monkeypatch)


@pytest.fixture
def queue_failures() -> Iterator[list[dict[str, Any]]]:
    reports: list[dict[str, Any]] = []

    def on_failure(sender: Any, **kwargs: Any) -> None:
        reports.append({"sender": sender, **kwargs})

    webhook_queue_failed.connect(on_failure, weak=False, dispatch_uid="test_firing.queue_failed")
    try:
        yield reports
    finally:
        webhook_queue_failed.disconnect(dispatch_uid="test_firing.queue_failed")


# -- one query, the right endpoints -----------------------------------------------------------------


@pytest.mark.django_db
def test_fire_sync_runs_one_query_for_the_endpoints(django_assert_num_queries: Any) -> None:
    for path in ("a", "b", "c"):
        _endpoint(None, path)
    with transaction.atomic(), django_assert_num_queries(1):
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(ids) == 3


@pytest.mark.django_db
def test_fire_sync_with_no_subscribed_endpoint_runs_one_query_and_queues_nothing(
    django_assert_num_queries: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as callbacks, django_assert_num_queries(1):
        assert WebhookManager().fire_sync("nobody.listens", {"id": 1}) == []
    assert callbacks == []


@pytest.mark.django_db
def test_only_active_endpoints_subscribed_to_the_exact_event_get_a_delivery(
    receiver: Receiver,
    loopback_allowed: None,
    deliver_spy: DeliverSpy,
    django_capture_on_commit_callbacks: Any,
) -> None:
    wanted = [_endpoint(receiver, "one"), _endpoint(receiver, "two")]
    _endpoint(receiver, "inactive", active=False)
    _endpoint(receiver, "prefix", event="order")
    _endpoint(receiver, "longer", event="order.paid.v2")
    _endpoint(receiver, "case", event="Order.Paid")
    _endpoint(receiver, "other", event="order.refunded")
    with django_capture_on_commit_callbacks(execute=True):
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(ids) == 2
    assert sorted(deliver_spy.endpoint_ids) == sorted(e.pk for e in wanted)
    hits = receiver.wait_for(2)
    assert sorted(hit.path for hit in hits) == ["/hook/one", "/hook/two"]
    assert {row.endpoint_id for row in WebhookDelivery.objects.all()} == {e.pk for e in wanted}


# -- the body: serialized once, identical bytes everywhere -------------------------------------------


@pytest.mark.django_db
def test_the_body_is_serialized_once_for_all_endpoints(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    for path in ("a", "b", "c", "d"):
        _endpoint(receiver, path)
    bodies: list[Any] = []
    real_dumps = json.dumps

    def spy(obj: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(obj, dict) and set(obj) == {"event", "data"}:
            bodies.append(obj)
        return real_dumps(obj, *args, **kwargs)

    monkeypatch.setattr(manager_module.json, "dumps", spy)
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(receiver.wait_for(4)) == 4
    assert len(bodies) == 1


@pytest.mark.django_db
def test_every_receiver_gets_the_same_bytes_signed_under_its_own_secret(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoints = {f"/hook/{p}": _endpoint(receiver, p) for p in ("a", "b", "c")}
    data = {"name": "Zoë", "tags": ["x", "y"], "nested": {"n": 1.5, "ok": True, "none": None}}
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", data)
    hits = receiver.wait_for(3)
    assert len(hits) == 3
    assert len({hit.body for hit in hits}) == 1
    for hit in hits:
        secret = endpoints[hit.path].secret
        assert verify_signature(secret, hit.body, hit.headers["X-Webhook-Signature"])
        assert verify_webhook(secret, hit.headers, hit.body)
        assert not verify_signature(
            "secret-elsewhere", hit.body, hit.headers["X-Webhook-Signature"]
        )
    rows = WebhookDelivery.objects.all()
    assert {row.request_body.encode("utf-8") for row in rows} == {hits[0].body}


@pytest.mark.django_db
def test_the_body_is_compact_json_of_event_and_data_in_utf8(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver, "a")
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 7, "city": "Zürich", "list": [1, 2]})
    (hit,) = receiver.wait_for(1)
    expected = '{"event":"order.paid","data":{"id":7,"city":"Zürich","list":[1,2]}}'
    assert hit.body == expected.encode("utf-8")


@pytest.mark.django_db
def test_django_json_encoder_types_are_serialized(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver, "a")
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    data = {
        "at": datetime.datetime(2024, 5, 17, 12, 30, 15, 123000, tzinfo=datetime.UTC),
        "day": datetime.date(2024, 5, 17),
        "time": datetime.time(8, 15),
        "wait": datetime.timedelta(minutes=5),
        "amount": decimal.Decimal("19.90"),
        "id": ident,
    }
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", data)
    (hit,) = receiver.wait_for(1)
    assert json.loads(hit.body)["data"] == {
        "at": "2024-05-17T12:30:15.123Z",
        "day": "2024-05-17",
        "time": "08:15:00",
        "wait": "P0DT00H05M00S",
        "amount": "19.90",
        "id": str(ident),
    }


# -- after commit only ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_before_the_transaction_commits(
    receiver: Receiver, loopback_allowed: None
) -> None:
    _endpoint(receiver, "a")
    _endpoint(receiver, "b")
    with transaction.atomic():
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
        with transaction.atomic():
            fire_webhook(None, "order.paid", {"id": 2})
        assert receiver.hits == []
        assert WebhookDelivery.objects.count() == 0
    assert len(ids) == 2
    hits = receiver.wait_for(4)
    assert len(hits) == 4
    assert {hit.headers["X-Webhook-Id"] for hit in hits} >= set(ids)


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_when_the_transaction_rolls_back(
    receiver: Receiver, loopback_allowed: None, deliver_spy: DeliverSpy
) -> None:
    _endpoint(receiver, "a")
    with pytest.raises(RuntimeError), transaction.atomic():
        assert len(WebhookManager().fire_sync("order.paid", {"id": 1})) == 1
        raise RuntimeError("roll back")
    assert deliver_spy.calls == []
    assert receiver.wait_for(1, timeout=0.3) == []
    assert WebhookDelivery.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_when_an_inner_savepoint_rolls_back(
    receiver: Receiver, loopback_allowed: None
) -> None:
    _endpoint(receiver, "a")
    with transaction.atomic():
        try:
            with transaction.atomic():
                WebhookManager().fire_sync("order.paid", {"rolled": "back"})
                raise RuntimeError("roll back the savepoint")
        except RuntimeError:
            pass
        WebhookManager().fire_sync("order.paid", {"kept": True})
    hits = receiver.wait_for(2, timeout=0.3)
    assert [json.loads(hit.body)["data"] for hit in hits] == [{"kept": True}]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_jobs_are_queued_at_once(
    receiver: Receiver, loopback_allowed: None
) -> None:
    _endpoint(receiver, "a")
    (delivery_id,) = WebhookManager().fire_sync("order.paid", {"id": 1})
    (hit,) = receiver.wait_for(1)
    assert hit.headers["X-Webhook-Id"] == delivery_id


# -- the delivery ids ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_fire_sync_returns_one_distinct_uuid_hex_delivery_id_per_endpoint(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoints = {f"/hook/{p}": _endpoint(receiver, p) for p in ("a", "b", "c")}
    with django_capture_on_commit_callbacks(execute=True):
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(ids) == 3 and len(set(ids)) == 3
    for delivery_id in ids:
        assert UUID_HEX.match(delivery_id)
        assert uuid.UUID(delivery_id).hex == delivery_id
    hits = receiver.wait_for(3)
    assert sorted(hit.headers["X-Webhook-Id"] for hit in hits) == sorted(ids)
    by_endpoint = {row.endpoint_id: row.delivery_id for row in WebhookDelivery.objects.all()}
    for hit in hits:
        assert by_endpoint[endpoints[hit.path].pk] == hit.headers["X-Webhook-Id"]


@pytest.mark.django_db
def test_fire_webhook_in_a_request_returns_the_delivery_ids(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    _endpoint(receiver, "a")
    request = RequestFactory().post("/orders/7/pay")
    with django_capture_on_commit_callbacks(execute=True):
        ids = fire_webhook(request, "order.paid", {"id": 7})
    assert len(ids) == 1 and UUID_HEX.match(ids[0])
    (hit,) = receiver.wait_for(1)
    assert hit.headers["X-Webhook-Id"] == ids[0]
    assert json.loads(hit.body) == {"event": "order.paid", "data": {"id": 7}}


# -- batches of first attempts, and the fan-out job ----------------------------------------------


@pytest.mark.django_db
def test_an_event_to_ten_endpoints_or_more_is_queued_as_one_batch_job_and_all_are_delivered(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    deliver_spy: DeliverSpy,
    django_capture_on_commit_callbacks: Any,
) -> None:
    endpoints = [_endpoint(receiver, f"e{i}") for i in range(25)]
    batch_calls: list[dict[str, Any]] = []
    real = webhook_tasks.DeliverWebhookBatchJob.apply_async

    def spy(*args: Any, **kwargs: Any) -> Any:
        batch_calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(webhook_tasks.DeliverWebhookBatchJob, "apply_async", spy)
    with django_capture_on_commit_callbacks(execute=True):
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(batch_calls) == 1
    event, body, jobs = batch_calls[0]["args"]
    assert event == "order.paid"
    assert sorted(delivery_id for _, delivery_id in jobs) == sorted(ids)
    assert sorted(pk for pk, _ in jobs) == sorted(e.pk for e in endpoints)
    hits = receiver.wait_for(25)
    assert len(hits) == 25
    assert sorted(hit.path for hit in hits) == sorted(f"/hook/e{i}" for i in range(25))
    assert {hit.body for hit in hits} == {body.encode("utf-8")}
    assert deliver_spy.calls == []  # no single job: every first attempt was in the batch
    rows = WebhookDelivery.objects.all()
    assert sorted(row.delivery_id for row in rows) == sorted(ids)
    assert {(row.success, row.attempt, row.final) for row in rows} == {(True, 1, False)}


@pytest.mark.django_db
def test_fewer_than_ten_endpoints_are_queued_one_job_each(
    monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    for i in range(9):
        _endpoint(None, f"e{i}")
    batch_calls = _published(monkeypatch, webhook_tasks.DeliverWebhookBatchJob)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert batch_calls == []
    assert len(queued) == 9
    assert all("retries" not in options for options in queued)


@pytest.mark.django_db
def test_batches_are_cut_at_batch_size_and_batching_can_be_switched_off(
    monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    for i in range(25):
        _endpoint(None, f"e{i}")
    batch_calls = _published(monkeypatch, webhook_tasks.DeliverWebhookBatchJob)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    with webhook_settings(BATCH_SIZE=10), django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert [len(call["args"][2]) for call in batch_calls] == [10, 10, 5]
    assert queued == []

    batch_calls.clear()
    with webhook_settings(BATCH_SIZE=1), django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert batch_calls == []
    assert len(queued) == 25


@pytest.mark.django_db
def test_more_than_twenty_messages_are_queued_by_one_fan_out_job(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    assert FAN_OUT_THRESHOLD == 20
    endpoints = [_endpoint(receiver, f"e{i}") for i in range(42)]
    fan_out_calls: list[dict[str, Any]] = []
    batch_sizes: list[int] = []
    real_fan_out = webhook_tasks.FanOutWebhookJob.apply_async
    real_batch = webhook_tasks.DeliverWebhookBatchJob.apply_async

    def fan_out_spy(*args: Any, **kwargs: Any) -> Any:
        fan_out_calls.append(kwargs)
        return real_fan_out(*args, **kwargs)

    def batch_spy(*args: Any, **kwargs: Any) -> Any:
        batch_sizes.append(len(kwargs["args"][2]))
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(webhook_tasks.FanOutWebhookJob, "apply_async", fan_out_spy)
    monkeypatch.setattr(webhook_tasks.DeliverWebhookBatchJob, "apply_async", batch_spy)
    with webhook_settings(BATCH_SIZE=2), django_capture_on_commit_callbacks(execute=True):
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(fan_out_calls) == 1  # 21 batches: the caller published one message
    _, _, jobs = fan_out_calls[0]["args"]
    assert sorted(pk for pk, _ in jobs) == sorted(e.pk for e in endpoints)
    assert batch_sizes == [2] * 21
    assert len(receiver.wait_for(42)) == 42
    assert sorted(WebhookDelivery.objects.values_list("delivery_id", flat=True)) == sorted(ids)


@pytest.mark.django_db
def test_twenty_single_jobs_or_fewer_are_queued_by_the_caller_without_fan_out(
    monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    for i in range(FAN_OUT_THRESHOLD):
        _endpoint(None, f"e{i}")
    fan_out_calls = _published(monkeypatch, webhook_tasks.FanOutWebhookJob)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    with webhook_settings(BATCH_SIZE=1), django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert fan_out_calls == []
    assert len(queued) == FAN_OUT_THRESHOLD


@pytest.mark.django_db
def test_a_fan_out_that_cannot_be_queued_falls_back_to_one_job_per_endpoint(
    monkeypatch: Any,
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    for i in range(FAN_OUT_THRESHOLD + 1):
        _endpoint(None, f"e{i}")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(webhook_tasks.FanOutWebhookJob, "apply_async", broken)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    caplog.set_level(logging.ERROR, logger=LOGGER)
    with webhook_settings(BATCH_SIZE=1):
        with django_capture_on_commit_callbacks() as callbacks:
            WebhookManager().fire_sync("order.paid", {"id": 1})
        for callback in callbacks:
            callback()
    assert len(queued) == FAN_OUT_THRESHOLD + 1
    assert any("fan-out" in r.getMessage() for r in caplog.records if r.name == LOGGER)


@pytest.mark.django_db
def test_a_batch_that_cannot_be_queued_falls_back_to_one_job_per_endpoint(
    monkeypatch: Any,
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    for i in range(12):
        _endpoint(None, f"e{i}")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(webhook_tasks.DeliverWebhookBatchJob, "apply_async", broken)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    caplog.set_level(logging.ERROR, logger=LOGGER)
    with django_capture_on_commit_callbacks(execute=True):
        WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(queued) == 12
    assert any("batch" in r.getMessage() for r in caplog.records if r.name == LOGGER)


# -- a job that cannot be queued ------------------------------------------------------------------


@pytest.mark.django_db
def test_a_queuing_failure_is_logged_reported_not_raised_and_others_still_delivered(
    receiver: Receiver,
    loopback_allowed: None,
    monkeypatch: Any,
    caplog: Any,
    queue_failures: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    first, broken, last = (_endpoint(receiver, p) for p in ("first", "broken", "last"))
    spy = DeliverSpy(monkeypatch, fail_for={broken.pk})
    caplog.set_level(logging.ERROR, logger=LOGGER)
    with django_capture_on_commit_callbacks() as callbacks:
        ids = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert len(callbacks) == 1
    for callback in callbacks:
        callback()  # not robust-wrapped here: an exception would fail the test
    assert sorted(spy.endpoint_ids) == sorted([first.pk, broken.pk, last.pk])
    hits = receiver.wait_for(2)
    assert sorted(hit.path for hit in hits) == ["/hook/first", "/hook/last"]
    assert {row.endpoint_id for row in WebhookDelivery.objects.all()} == {first.pk, last.pk}

    assert len(queue_failures) == 1
    report = queue_failures[0]
    assert report["sender"] is webhook_tasks.DeliverWebhookJob
    assert report["endpoint_id"] == broken.pk
    assert report["event"] == "order.paid"
    assert report["delivery_id"] in ids
    assert report["delivery_id"] not in {hit.headers["X-Webhook-Id"] for hit in hits}
    assert isinstance(report["exception"], ConnectionError)

    errors = [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert str(broken.pk) in errors[0].getMessage()
    assert report["delivery_id"] in errors[0].getMessage()
    assert errors[0].exc_info is not None


@pytest.mark.django_db
def test_publish_jobs_counts_only_the_jobs_it_queued(
    monkeypatch: Any, queue_failures: list[dict[str, Any]]
) -> None:
    queued: list[Any] = []

    def apply_async(*args: Any, **kwargs: Any) -> None:
        if kwargs["args"][0] == 2:
            raise OSError("no broker")
        queued.append(kwargs["args"])

    monkeypatch.setattr(webhook_tasks.DeliverWebhookJob, "apply_async", apply_async)
    count = publish_jobs(
        "e", '{"event":"e","data":{}}', [(1, "a" * 32), (2, "b" * 32), (3, "c" * 32)]
    )
    assert count == 2
    assert [args[0] for args in queued] == [1, 3]
    assert [r["endpoint_id"] for r in queue_failures] == [2]


# -- validation -----------------------------------------------------------------------------------


def _circular() -> dict[str, Any]:
    data: dict[str, Any] = {}
    data["self"] = data
    return data


def _bad_fire_cases() -> list[Any]:
    """(test id, event name, data, expected code) for every fire that must be a 422. The
    ids keep the names of the tests these cases used to be."""
    name = "test_a_bad_event_name_is_a_422_and_queues_nothing"
    not_dict = "test_data_that_is_not_a_dict_is_a_422_and_queues_nothing"
    unserializable = "test_unserializable_data_is_a_422_and_queues_nothing"
    header = "test_an_event_name_that_cannot_be_an_http_header_value_is_a_422"
    utf8 = "test_data_that_cannot_be_encoded_as_utf8_is_a_422"
    non_finite = "test_non_finite_numbers_are_a_422_since_json_has_no_such_value"
    ok = {"id": 1}
    cases: list[tuple[str, Any, Any, str]] = [
        (f"{name}-empty", "", ok, "invalid_event"),
        (f"{name}-blank", "   ", ok, "invalid_event"),
        (f"{name}-256-chars", "x" * 256, ok, "invalid_event"),
        (f"{name}-none", None, ok, "invalid_event"),
        (f"{name}-int", 42, ok, "invalid_event"),
        (f"{name}-bytes", b"order.paid", ok, "invalid_event"),
        (f"{name}-list", ["order.paid"], ok, "invalid_event"),
        (f"{not_dict}-none", "order.paid", None, "invalid_data"),
        (f"{not_dict}-list", "order.paid", [1, 2], "invalid_data"),
        (f"{not_dict}-str", "order.paid", "text", "invalid_data"),
        (f"{not_dict}-int", "order.paid", 42, "invalid_data"),
        (f"{not_dict}-bytes", "order.paid", b"{}", "invalid_data"),
        (f"{not_dict}-tuple", "order.paid", ({"id": 1},), "invalid_data"),
        (f"{unserializable}-object", "order.paid", {"thing": object()}, "invalid_data"),
        (f"{unserializable}-set", "order.paid", {"set": {1, 2}}, "invalid_data"),
        (f"{unserializable}-tuple-key", "order.paid", {(1, 2): "tuple key"}, "invalid_data"),
        (f"{unserializable}-circular", "order.paid", _circular(), "invalid_data"),
        (f"{header}-non-latin-1", "注文.paid", ok, "invalid_event"),
        (f"{header}-newline", "order\npaid", ok, "invalid_event"),
        (f"{header}-crlf", "order.paid\r\nX-Injected: 1", ok, "invalid_event"),
        (f"{utf8}-lone-surrogate-value", "order.paid", {"text": "\ud800"}, "invalid_data"),
        (f"{utf8}-lone-surrogate-key", "order.paid", {"nested": {"k\udfff": 1}}, "invalid_data"),
        (f"{non_finite}-nan", "order.paid", {"amount": float("nan")}, "invalid_data"),
        (f"{non_finite}-inf", "order.paid", {"amount": float("inf")}, "invalid_data"),
        (f"{non_finite}--inf", "order.paid", {"amount": float("-inf")}, "invalid_data"),
    ]
    return [pytest.param(event, data, code, id=case_id) for case_id, event, data, code in cases]


def _subscription(event_name: Any) -> str:
    """The event the endpoint subscribes to: exactly the fired name when the column can
    store it (a string of at most 255 characters), so "queues nothing" is not just "no
    endpoint matched"; otherwise the storable string closest to it."""
    if isinstance(event_name, str):
        return event_name[:255]
    if isinstance(event_name, bytes):
        return event_name.decode("utf-8")
    if isinstance(event_name, list):
        return str(event_name[0])
    return str(event_name)


@pytest.mark.django_db
@pytest.mark.parametrize(("event_name", "data", "code"), _bad_fire_cases())
def test_a_bad_fire_is_a_422_and_queues_nothing(
    event_name: Any,
    data: Any,
    code: str,
    deliver_spy: DeliverSpy,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """A bad event name (empty, blank, too long, not a string, or a name no HTTP header
    can carry: it travels in ``X-Webhook-Event``) or bad data (not a dict, not
    JSON-serializable, a lone surrogate with no UTF-8 form, ``NaN``/``Infinity`` that
    strict JSON parsers reject) is refused when fired: a 422 before anything is queued,
    not a job that crashes before any row or fails five attempts on the same error. An
    active endpoint is subscribed to the fired event, so without the check it would get
    a delivery."""
    _endpoint(None, "a", event=_subscription(event_name))
    if isinstance(event_name, str) and len(event_name) <= 255:
        assert WebhookEndpoint.objects.filter(event=event_name, active=True).count() == 1
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(ValidationException) as info,
    ):
        WebhookManager().fire_sync(event_name, data)
    assert info.value.status_code == 422
    assert info.value.code == code
    assert callbacks == []
    assert deliver_spy.calls == []


@pytest.mark.django_db
def test_an_event_name_of_255_characters_is_accepted(
    django_capture_on_commit_callbacks: Any, monkeypatch: Any
) -> None:
    _endpoint(None, "a", event="x" * 255)
    queued = _published(monkeypatch, webhook_tasks.DeliverWebhookJob)
    with django_capture_on_commit_callbacks(execute=True):
        assert len(WebhookManager().fire_sync("x" * 255, {"id": 1})) == 1
    assert len(queued) == 1


@pytest.mark.django_db
def test_fire_webhook_validates_like_fire_sync(django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        with pytest.raises(ValidationException) as info:
            fire_webhook(None, "", {"id": 1})
        assert info.value.status_code == 422
        with pytest.raises(ValidationException):
            fire_webhook(None, "order.paid", {"thing": object()})
    assert callbacks == []


# -- async -----------------------------------------------------------------------------------------


@pytest.fixture
async def orm_thread() -> AsyncIterator[None]:
    """Closes the connection the ORM's worker thread opened (the test database can only
    be dropped once no session uses it)."""
    yield
    await sync_to_async(connections.close_all)()


@pytest.mark.django_db(transaction=True)
async def test_async_fire_queues_after_commit_and_delivers(
    receiver: Receiver, loopback_allowed: None, orm_thread: None
) -> None:
    endpoint = await WebhookEndpoint.objects.acreate(
        url=f"{receiver.url}/async", event="order.paid", secret="s3cret"
    )
    ids = await WebhookManager().fire("order.paid", {"id": 9})
    assert len(ids) == 1 and UUID_HEX.match(ids[0])
    (hit,) = receiver.wait_for(1)
    assert hit.path == "/hook/async"
    assert hit.headers["X-Webhook-Id"] == ids[0]
    assert json.loads(hit.body) == {"event": "order.paid", "data": {"id": 9}}
    assert verify_signature("s3cret", hit.body, hit.headers["X-Webhook-Signature"])
    row = await WebhookDelivery.objects.aget()
    assert row.endpoint_id == endpoint.pk and row.success and row.delivery_id == ids[0]


@pytest.mark.django_db(transaction=True)
async def test_afire_webhook_delivers_to_every_subscribed_endpoint(
    receiver: Receiver, loopback_allowed: None, orm_thread: None
) -> None:
    for path in ("a", "b"):
        await WebhookEndpoint.objects.acreate(
            url=f"{receiver.url}/{path}", event="order.paid", secret="s"
        )
    ids = await afire_webhook(None, "order.paid", {"id": 3})
    assert len(set(ids)) == 2
    hits = receiver.wait_for(2)
    assert sorted(hit.headers["X-Webhook-Id"] for hit in hits) == sorted(ids)


@pytest.mark.django_db(transaction=True)
async def test_async_fire_validates_before_queuing(
    deliver_spy: DeliverSpy, orm_thread: None
) -> None:
    with pytest.raises(ValidationException):
        await WebhookManager().fire("", {"id": 1})
    with pytest.raises(ValidationException):
        await afire_webhook(None, "order.paid", ["not", "a", "dict"])
    assert deliver_spy.calls == []
