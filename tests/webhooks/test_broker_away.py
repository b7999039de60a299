"""The broker away while a job on a worker queues more work: a retry, a batch's retries,
a fan-out's jobs. Celery drops the message of a job whose retry it could not publish;
the suite's jobs instead wait longer for the broker (about ten seconds) and, should it
still be away, put their own message back (``Reject(requeue=True)``), so the attempt is
made again and no delivery is lost. A publish refused for another reason keeps Celery's
behaviour (dropped, and logged). From a request, ``fire()`` is unchanged: it does not fail
its caller, and a broker it cannot reach is reported through ``webhook_queue_failed``.

The jobs run as on a worker (not eager), against real receivers on 127.0.0.1, with the
broker's answer to a publish replaced: the machine's Redis is shared and is not stopped
here (tests/cluster stops a Redis of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kombu.exceptions
import pytest
import redis.exceptions
from celery.exceptions import Reject
from django.test import Client

from appframework_webhooks import WebhookDelivery, WebhookEndpoint
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import serialize
from appframework_webhooks.schedule import WORKER_PUBLISH_RETRY, publish_window
from appframework_webhooks.tasks import (
    DeliverWebhookBatchJob,
    DeliverWebhookJob,
    FanOutWebhookJob,
    publish_jobs,
)

from .receiver import Receiver

pytestmark = pytest.mark.django_db

EVENT = "order.paid"
BODY = serialize(EVENT, {"id": 1})


def _wrapped(cause: Exception) -> kombu.exceptions.OperationalError:
    """What kombu raises when its transport fails: OperationalError from the cause."""
    try:
        raise kombu.exceptions.OperationalError(str(cause)) from cause
    except kombu.exceptions.OperationalError as exc:
        return exc


BROKER_AWAY = _wrapped(redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379."))
#: The broker answered, and refused: not an outage (it would refuse again).
BROKER_REFUSES = _wrapped(redis.exceptions.ResponseError("OOM command not allowed"))


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


class Broker:
    """``apply_async`` of the jobs, answering with ``error`` (None: accepted); every
    call's options are kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, error: Exception | None) -> None:
        self.error = error
        self.calls: list[dict[str, Any]] = []
        for task in (DeliverWebhookJob, DeliverWebhookBatchJob):
            monkeypatch.setattr(task, "apply_async", self)

    def __call__(self, *args: Any, **options: Any) -> None:
        self.calls.append(options)
        if self.error is not None:
            raise self.error


@pytest.fixture
def on_a_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The jobs' request as a worker's (so a retry is published), on the test's own
    connection (a kept connection would not see the test transaction's rows)."""
    monkeypatch.setattr(webhook_tasks, "_keeps_connection", lambda task: False)
    for task in (DeliverWebhookJob, DeliverWebhookBatchJob, FanOutWebhookJob):
        task.push_request(
            id="job-1", retries=0, is_eager=False, called_directly=False, delivery_info={}
        )
    try:
        yield
    finally:
        for task in (DeliverWebhookJob, DeliverWebhookBatchJob, FanOutWebhookJob):
            task.pop_request()


def failing_endpoint(receiver: Receiver, name: str = "e") -> WebhookEndpoint:
    receiver.respond = lambda n: (503, {}, b"busy")
    return WebhookEndpoint.objects.create(url=f"{receiver.url}/{name}", event=EVENT, secret="s")


def deliver(endpoint: WebhookEndpoint) -> None:
    DeliverWebhookJob.run(endpoint.pk, EVENT, BODY, "delivery-1")


def test_a_retry_the_broker_cannot_take_puts_the_job_back_instead_of_dropping_it(
    receiver: Receiver, loopback_allowed: None, on_a_worker: None, monkeypatch: Any
) -> None:
    endpoint = failing_endpoint(receiver)
    Broker(monkeypatch, BROKER_AWAY)

    with pytest.raises(Reject) as rejected:
        deliver(endpoint)

    assert rejected.value.requeue is True
    assert rejected.value.reason is BROKER_AWAY
    (row,) = WebhookDelivery.objects.all()  # the attempt made is logged, not final
    assert (row.attempt, row.success, row.final) == (1, False, False)


def test_a_retry_from_a_worker_waits_longer_for_the_broker_than_celerys_default(
    receiver: Receiver, loopback_allowed: None, on_a_worker: None, monkeypatch: Any
) -> None:
    """The policy goes with the retry's publish, and by kombu's own schedule it waits
    about ten seconds: a Redis restart, where Celery's default gives up within one."""
    from celery import current_app
    from kombu.utils.functional import retry_over_time

    endpoint = failing_endpoint(receiver)
    broker = Broker(monkeypatch, None)

    with pytest.raises(Exception, match="Retry in"):
        deliver(endpoint)

    (options,) = broker.calls
    assert options["retry_policy"] == WORKER_PUBLISH_RETRY

    def waits(policy: dict[str, Any]) -> float:
        slept: list[float] = []
        monkeypatch.setattr("kombu.utils.functional.sleep", slept.append)

        def refused() -> None:
            raise ConnectionError

        with pytest.raises(ConnectionError):
            retry_over_time(refused, ConnectionError, **policy)
        return sum(slept)

    ours, celerys = waits(WORKER_PUBLISH_RETRY), waits(current_app.conf.task_publish_retry_policy)
    assert ours == pytest.approx(publish_window())
    assert 8 <= ours <= 15
    assert celerys <= 1.5 < ours


@pytest.mark.parametrize(
    "refusal",
    [BROKER_REFUSES, ValueError("message too large")],
    ids=["the broker out of memory", "another error"],
)
def test_a_retry_refused_for_another_reason_is_dropped_as_celery_does(
    receiver: Receiver,
    loopback_allowed: None,
    on_a_worker: None,
    monkeypatch: Any,
    refusal: Exception,
) -> None:
    """Only a broker that cannot be reached sends the message back: one it refuses would
    come back forever."""
    endpoint = failing_endpoint(receiver)
    Broker(monkeypatch, refusal)

    with pytest.raises(Reject) as rejected:
        deliver(endpoint)

    assert rejected.value.requeue is False


def test_a_job_whose_time_runs_out_waiting_for_the_broker_goes_back(
    receiver: Receiver, loopback_allowed: None, on_a_worker: None, monkeypatch: Any
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    endpoint = failing_endpoint(receiver)
    Broker(monkeypatch, SoftTimeLimitExceeded())

    with pytest.raises(Reject) as rejected:
        deliver(endpoint)

    assert rejected.value.requeue is True


def test_the_time_limits_leave_room_for_the_slowest_batch_and_the_wait_for_the_broker() -> None:
    from appframework.conf import app_settings
    from appframework_webhooks.schedule import time_limits

    conf = app_settings.WEBHOOKS
    soft, hard = time_limits()
    slowest_batch = float(conf.CONNECT_TIMEOUT) + float(conf.DEADLINE) + 5
    assert soft >= slowest_batch + publish_window() + 5
    assert hard > soft


def test_a_batch_whose_retries_the_broker_cannot_take_comes_back_whole(
    receiver: Receiver, loopback_allowed: None, on_a_worker: None, monkeypatch: Any
) -> None:
    """Every attempt is made and logged first; then the batch's message goes back, and
    the endpoints already delivered get a repeat their receivers drop by X-Webhook-Id."""
    endpoints = [
        WebhookEndpoint.objects.create(url=f"{receiver.url}/e{i}", event=EVENT, secret="s")
        for i in range(10)
    ]
    receiver.respond = lambda n: (
        (503, {}, b"") if receiver.hits[n].path == "/hook/e4" else (200, {}, b"ok")
    )
    Broker(monkeypatch, BROKER_AWAY)

    with pytest.raises(Reject) as rejected:
        DeliverWebhookBatchJob.run(EVENT, BODY, [(e.pk, f"d{e.pk}") for e in endpoints])

    assert rejected.value.requeue is True
    assert WebhookDelivery.objects.count() == 10
    assert WebhookDelivery.objects.filter(success=True).count() == 9


def test_a_fan_out_the_broker_cannot_take_comes_back(on_a_worker: None, monkeypatch: Any) -> None:
    Broker(monkeypatch, BROKER_AWAY)

    with pytest.raises(Reject) as rejected:
        FanOutWebhookJob.run(EVENT, BODY, [(n, f"d{n}") for n in range(30)])

    assert rejected.value.requeue is True


def test_from_a_request_a_broker_away_is_reported_and_the_caller_goes_on(
    monkeypatch: Any,
) -> None:
    """Outside a worker nothing can be put back: the failure is logged and signalled,
    and the other endpoints are still tried."""
    from appframework_webhooks import webhook_queue_failed

    broker = Broker(monkeypatch, BROKER_AWAY)
    failed: list[str] = []

    def record(sender: Any, delivery_id: str, **kwargs: Any) -> None:
        failed.append(delivery_id)

    webhook_queue_failed.connect(record)
    try:
        queued = publish_jobs(EVENT, BODY, [(1, "a"), (2, "b")])
    finally:
        webhook_queue_failed.disconnect(record)

    assert queued == 0
    assert failed == ["a", "b"]
    assert all("retry_policy" not in options for options in broker.calls)


def test_a_view_that_cannot_reach_the_broker_answers_503_not_500(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.webhooks.test_broker_away"
    response = Client().get("/publish", HTTP_ACCEPT="application/json")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "service_unavailable"


def publish_view(request: Any) -> Any:
    raise BROKER_AWAY


from django.urls import path  # noqa: E402

urlpatterns = [path("publish", publish_view)]


def test_a_view_whose_broker_refuses_is_a_500_not_an_outage(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.webhooks.test_broker_away"
    client = Client(raise_request_exception=False)
    response = client.get("/refused", HTTP_ACCEPT="application/json")
    assert response.status_code == 500


def refused_view(request: Any) -> Any:
    raise BROKER_REFUSES


urlpatterns.append(path("refused", refused_view))
