"""``DeliverWebhookBatchJob``: the first attempts of one event to many endpoints, sent
at the same time from one job, each with its own deadline and its own log row, and every
endpoint that failed queued again as its own ``DeliverWebhookJob`` (attempt 2, with its
backoff). Run inline (eager), against real receivers on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest

from appframework_webhooks import WebhookDelivery, WebhookEndpoint
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import serialize
from appframework_webhooks.tasks import DeliverWebhookBatchJob

from .conftest import webhook_settings
from .receiver import Receiver

pytestmark = pytest.mark.django_db

EVENT = "order.paid"
BODY = serialize(EVENT, {"id": 1})


def _endpoints(receiver: Receiver, count: int, **extra: Any) -> list[WebhookEndpoint]:
    return [
        WebhookEndpoint.objects.create(
            url=f"{receiver.url}/e{i}", event=EVENT, secret=f"s{i}", **extra
        )
        for i in range(count)
    ]


def _jobs(endpoints: list[WebhookEndpoint]) -> list[tuple[int, str]]:
    return [(int(e.pk), f"delivery-{e.pk}") for e in endpoints]


class Requeued:
    """DeliverWebhookJob.apply_async calls (the batch's retries), not run."""

    def __init__(self, monkeypatch: Any) -> None:
        self.calls: list[dict[str, Any]] = []
        monkeypatch.setattr(webhook_tasks.DeliverWebhookJob, "apply_async", self)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(kwargs)

    @property
    def endpoint_ids(self) -> list[int]:
        return sorted(call["args"][0] for call in self.calls)


def test_every_endpoint_of_the_batch_gets_its_post_and_its_own_log_row(
    receiver: Receiver, loopback_allowed: None
) -> None:
    endpoints = _endpoints(receiver, 12)
    jobs = _jobs(endpoints)

    delivered = DeliverWebhookBatchJob.apply(args=(EVENT, BODY, jobs)).get()

    assert delivered == 12
    hits = receiver.wait_for(12)
    assert sorted(hit.headers["X-Webhook-Id"] for hit in hits) == sorted(d for _, d in jobs)
    assert {hit.body for hit in hits} == {BODY.encode()}
    rows = {row.delivery_id: row for row in WebhookDelivery.objects.all()}
    assert set(rows) == {d for _, d in jobs}
    for pk, delivery_id in jobs:
        row = rows[delivery_id]
        assert (row.endpoint_id, row.attempt, row.success, row.final) == (pk, 1, True, False)
        assert row.request_body == BODY
        assert row.status_code == 200


def test_failed_endpoints_are_queued_again_one_job_each_as_attempt_two_with_backoff(
    receiver: Receiver, loopback_allowed: None, monkeypatch: Any
) -> None:
    endpoints = _endpoints(receiver, 10)
    failing = {f"/hook/e{i}" for i in (1, 4, 7)}
    receiver.respond = lambda n: (
        (503, {}, b"busy") if receiver.hits[n].path in failing else (200, {}, b"ok")
    )
    requeued = Requeued(monkeypatch)

    delivered = DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints))).get()

    assert delivered == 7
    assert requeued.endpoint_ids == sorted(endpoints[i].pk for i in (1, 4, 7))
    for call in requeued.calls:
        pk, event, body, delivery_id = call["args"]
        assert (event, body, delivery_id) == (EVENT, BODY, f"delivery-{pk}")
        assert call["retries"] == 1  # the job runs as attempt 2
        # BACKOFF_BASE 0.01 in these tests: the first retry's wait, with its jitter
        assert 0.01 * 0.8 <= call["countdown"] <= 0.01 * 1.2
    failed = WebhookDelivery.objects.filter(success=False)
    assert sorted(row.endpoint_id for row in failed) == requeued.endpoint_ids
    assert {(row.attempt, row.final, row.status_code) for row in failed} == {(1, False, 503)}


def test_a_requeued_endpoint_is_delivered_by_its_own_job_as_attempt_two(
    receiver: Receiver, loopback_allowed: None
) -> None:
    endpoints = _endpoints(receiver, 10)
    seen: set[str] = set()

    def respond(n: int) -> tuple[int, dict[str, str], bytes]:
        path = receiver.hits[n].path
        if path == "/hook/e3" and path not in seen:
            seen.add(path)
            return 500, {}, b"once"
        return 200, {}, b"ok"

    receiver.respond = respond
    DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))

    rows = list(WebhookDelivery.objects.filter(endpoint=endpoints[3]).order_by("attempt"))
    assert [(r.attempt, r.success, r.final) for r in rows] == [(1, False, False), (2, True, False)]
    assert {r.delivery_id for r in rows} == {f"delivery-{endpoints[3].pk}"}
    assert WebhookDelivery.objects.filter(success=True).count() == 10


def test_an_endpoint_refused_for_good_is_logged_final_and_not_queued_again(
    receiver: Receiver, loopback_allowed: None, monkeypatch: Any
) -> None:
    endpoints = _endpoints(receiver, 10)
    unsafe = WebhookEndpoint.objects.create(url="http://10.0.0.5/hook", event=EVENT, secret="s")
    requeued = Requeued(monkeypatch)

    DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs([*endpoints, unsafe])))

    assert requeued.calls == []
    row = WebhookDelivery.objects.get(endpoint=unsafe)
    assert (row.attempt, row.success, row.final, row.error_code) == (1, False, True, "unsafe_url")


def test_with_one_attempt_allowed_a_failure_in_the_batch_is_final(
    receiver: Receiver, loopback_allowed: None, monkeypatch: Any
) -> None:
    endpoints = _endpoints(receiver, 10)
    receiver.respond = lambda n: (500, {}, b"down")
    requeued = Requeued(monkeypatch)

    with webhook_settings(MAX_ATTEMPTS=1):
        DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))

    assert requeued.calls == []
    assert set(WebhookDelivery.objects.values_list("final", flat=True)) == {True}


def test_disabled_and_deleted_endpoints_are_skipped_without_a_post_or_a_row(
    receiver: Receiver, loopback_allowed: None
) -> None:
    endpoints = _endpoints(receiver, 10)
    jobs = _jobs(endpoints)
    WebhookEndpoint.objects.filter(pk=endpoints[0].pk).update(active=False)
    endpoints[1].delete()

    delivered = DeliverWebhookBatchJob.apply(args=(EVENT, BODY, jobs)).get()

    assert delivered == 8
    time.sleep(0.2)
    assert sorted(hit.path for hit in receiver.hits) == sorted(f"/hook/e{i}" for i in range(2, 10))
    assert WebhookDelivery.objects.count() == 8


def test_a_slow_receiver_delays_no_other_endpoint_of_the_batch(
    receiver: Receiver, loopback_allowed: None
) -> None:
    """One endpoint answers after 2 s; the other 19 are sent and answered at once, each
    logged with its own short duration. Only the batch's end waits for the slow one."""
    endpoints = _endpoints(receiver, 20)

    def respond(n: int) -> tuple[int, dict[str, str], bytes]:
        if receiver.hits[n].path == "/hook/e0":
            time.sleep(2.0)
        return 200, {}, b"ok"

    receiver.respond = respond
    started = time.monotonic()
    with webhook_settings(READ_TIMEOUT=5.0):
        DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))
    took = time.monotonic() - started

    hits = receiver.wait_for(20)
    others = [hit for hit in hits if hit.path != "/hook/e0"]
    assert len(others) == 19
    assert max(hit.arrived for hit in others) - started < 1.0
    rows = {row.endpoint_id: row for row in WebhookDelivery.objects.all()}
    assert rows[endpoints[0].pk].duration_ms >= 1900
    assert all(rows[e.pk].duration_ms < 1000 for e in endpoints[1:])
    assert took >= 1.9  # the batch itself ends with its slowest attempt
    assert all(row.success for row in rows.values())


def test_sends_run_at_most_batch_concurrency_at_once(
    receiver: Receiver, loopback_allowed: None
) -> None:
    endpoints = _endpoints(receiver, 12)
    receiver.delay = 0.3

    with webhook_settings(BATCH_CONCURRENCY=4):
        started = time.monotonic()
        DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))
        took = time.monotonic() - started

    # 12 answers of 0.3 s, 4 at a time: three waves, not one and not twelve.
    assert 0.85 <= took < 2.5
    assert WebhookDelivery.objects.filter(success=True).count() == 12


def test_the_batch_writes_its_log_rows_in_one_statement(
    receiver: Receiver, loopback_allowed: None, django_assert_num_queries: Any
) -> None:
    endpoints = _endpoints(receiver, 15)
    with django_assert_num_queries(2):  # the endpoints' read and the log insert
        DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))
    assert WebhookDelivery.objects.count() == 15


@pytest.mark.postgresql  # ten seconds: run once, in the PostgreSQL stage
def test_a_ten_second_receiver_in_a_batch_of_a_hundred_delays_none_of_the_other_99(
    receiver: Receiver, loopback_allowed: None
) -> None:
    endpoints = _endpoints(receiver, 100)

    def respond(n: int) -> tuple[int, dict[str, str], bytes]:
        if receiver.hits[n].path == "/hook/e50":
            time.sleep(10.0)
        return 200, {}, b"ok"

    receiver.respond = respond
    started = time.monotonic()
    with webhook_settings(READ_TIMEOUT=15.0, DEADLINE=20.0):
        DeliverWebhookBatchJob.apply(args=(EVENT, BODY, _jobs(endpoints)))

    others = [hit for hit in receiver.wait_for(100) if hit.path != "/hook/e50"]
    assert len(others) == 99
    assert max(hit.arrived for hit in others) - started < 2.0
    rows = {row.endpoint_id: row for row in WebhookDelivery.objects.all()}
    assert rows[endpoints[50].pk].duration_ms >= 9900
    assert max(rows[e.pk].duration_ms for e in endpoints if e.pk != endpoints[50].pk) < 1000
    assert all(row.success for row in rows.values())
