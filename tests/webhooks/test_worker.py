"""DeliverWebhookJob run by a real Celery worker (a thread of this process, solo pool)
consuming from the real Redis broker: messages are serialized, acknowledged and retried
through Redis, not run inline as in eager mode."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import celery._state
import pytest
import redis
from celery import Celery, signals
from celery.contrib.testing.worker import start_worker
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.utils import timezone

from appframework_tenancy import as_tenant, current_tenant_id
from appframework_webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    verify_signature,
    verify_webhook,
)
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.manager import WebhookManager
from tests.core.test_ratelimit import require_redis
from tests.services import redis_url
from tests.system_checks import celery_worker_checks_skipped

from .conftest import webhook_settings

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_URL = redis_url(14)
QUEUE = "appframework-webhooks-worker-tests"
ROUTED_QUEUE = "appframework-webhooks-worker-tests-routed"
TASK_NAME = "appframework_webhooks.DeliverWebhookJob"
MAIN_THREAD = threading.main_thread()


def redis_client() -> redis.Redis:
    """The broker's database, or a failed test (never a skip) when Redis is down."""
    require_redis()  # a printed skip on a laptop without Redis, a failure on CI
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(
            f"These tests need the Redis broker at {REDIS_URL} (redis-server on "
            f"127.0.0.1:6379); it is not reachable: {exc!r}"
        )
    return client


class Runs:
    """Every DeliverWebhookJob run the worker finished: (delivery id, outcome), the
    outcome being the job's return value or "retry" (flagged when it ran inline)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[str, str]] = []
        self.queues: dict[str, list[str]] = {}

    def on_postrun(
        self,
        sender: Any = None,
        task: Any = None,
        args: Any = None,
        retval: Any = None,
        state: str | None = None,
        **kwargs: Any,
    ) -> None:
        if task is None or task.name != TASK_NAME:
            return
        # The worker thread's own database connection: not left open between jobs (an
        # in-memory SQLite database ignores the close, as it must).
        connection.close()
        outcome = "retry" if state == "RETRY" else str(retval)
        if getattr(task.request, "is_eager", False) or threading.current_thread() is MAIN_THREAD:
            outcome = f"inline, not in the worker: {outcome}"  # matches no expectation
        routing_key = (task.request.delivery_info or {}).get("routing_key")
        with self.lock:
            self.items.append((str(args[3]), outcome))
            self.queues.setdefault(str(args[3]), []).append(str(routing_key))

    def of(self, delivery_id: str) -> list[str]:
        with self.lock:
            return [outcome for key, outcome in self.items if key == delivery_id]

    def wait_done(self, delivery_id: str, timeout: float = 15.0) -> list[str]:
        """The outcomes of ``delivery_id``'s runs once one of them is terminal."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            outcomes = self.of(delivery_id)
            if outcomes and outcomes[-1] != "retry":
                return outcomes
            time.sleep(0.02)
        return self.of(delivery_id)


@pytest.fixture(scope="module")
def worker() -> Iterator[Runs]:
    """A worker thread on the Redis broker (its own database there, flushed before and
    after). The thread starts with an empty context: no tenant but the message's."""
    client = redis_client()
    client.flushdb()
    app = Celery("webhooks_worker_tests", broker=REDIS_URL, fixups=[], set_as_current=False)
    app.conf.update(
        task_always_eager=False,
        task_default_queue=QUEUE,
        result_backend=None,
        worker_hijack_root_logger=False,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=False,
    )
    runs = Runs()
    signals.task_postrun.connect(runs.on_postrun, weak=False, dispatch_uid="webhooks-worker-runs")
    # start_worker makes its app the current and default one (the shared DeliverWebhookJob
    # then publishes to Redis); the project's app comes back afterwards.
    default_app, current_app = celery._state.default_app, celery._state._tls.current_app
    try:
        with contextlib.ExitStack() as stack:
            with celery_worker_checks_skipped():
                stack.enter_context(
                    start_worker(
                        app,
                        pool="solo",
                        perform_ping_check=False,
                        shutdown_timeout=20,
                        queues=[QUEUE, ROUTED_QUEUE],
                    )
                )
            yield runs
    finally:
        signals.task_postrun.disconnect(dispatch_uid="webhooks-worker-runs")
        celery._state.default_app = default_app
        celery._state._tls.current_app = current_app
        client.flushdb()
        client.close()


def test_the_redis_broker_is_reachable() -> None:
    client = redis_client()
    try:
        assert client.ping() is True
    finally:
        client.close()


def test_a_committed_fire_is_delivered_once_by_the_worker(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event="order.paid", secret="s3")
    with transaction.atomic():
        [delivery_id] = WebhookManager().fire_sync("order.paid", {"id": 1})
    assert worker.wait_done(delivery_id) == ["delivered"]
    [hit] = receiver.hits
    assert hit.headers["X-Webhook-Id"] == delivery_id
    assert verify_signature("s3", hit.body, hit.headers["X-Webhook-Signature"])
    [row] = WebhookDelivery.objects.all()
    assert (row.endpoint_id, row.delivery_id, row.attempt) == (endpoint.pk, delivery_id, 1)
    assert row.success and not row.final and row.status_code == 200


def test_failing_attempts_are_retried_through_the_broker_up_to_five_with_only_the_last_final(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    receiver.respond = lambda n: (500, {}, b"down")
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    [delivery_id] = WebhookManager().fire_sync("e", {})
    assert worker.wait_done(delivery_id) == ["retry"] * 4 + ["failed"]
    time.sleep(0.3)  # room for a sixth attempt, which must not come
    assert worker.of(delivery_id) == ["retry"] * 4 + ["failed"]
    assert len(receiver.hits) == 5
    assert {hit.headers["X-Webhook-Id"] for hit in receiver.hits} == {delivery_id}
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [r.attempt for r in rows] == [1, 2, 3, 4, 5]
    assert [r.final for r in rows] == [False] * 4 + [True]
    assert [r.status_code for r in rows] == [500] * 5
    assert not any(r.success for r in rows)
    assert {r.delivery_id for r in rows} == {delivery_id}


def test_a_retried_delivery_stops_at_the_first_success(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    receiver.respond = lambda n: (503, {}, b"busy") if n < 2 else (200, {}, b"ok")
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    [delivery_id] = WebhookManager().fire_sync("e", {})
    assert worker.wait_done(delivery_id) == ["retry", "retry", "delivered"]
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(r.attempt, r.success, r.final) for r in rows] == [
        (1, False, False),
        (2, False, False),
        (3, True, False),
    ]
    assert len(receiver.hits) == 3


@pytest.mark.parametrize("change", ["disabled", "deleted"])
def test_a_job_whose_endpoint_is_disabled_or_deleted_after_queuing_sends_nothing(
    worker: Runs, receiver: Any, loopback_allowed: None, change: str
) -> None:
    release = threading.Event()

    def respond(n: int) -> tuple[int, dict[str, str], bytes]:
        if n == 0:
            release.wait(5)  # holds the (single) worker on the first job
        return 200, {}, b"ok"

    receiver.respond = respond
    WebhookEndpoint.objects.create(url=receiver.url, event="hold", secret="s")
    target = WebhookEndpoint.objects.create(url=receiver.url + "/target", event="e", secret="s")
    [hold_id] = WebhookManager().fire_sync("hold", {})
    [target_id] = WebhookManager().fire_sync("e", {})
    assert len(receiver.wait_for(1)) == 1  # the worker is busy; the target job is queued
    assert worker.of(target_id) == []
    if change == "disabled":
        WebhookEndpoint.objects.filter(pk=target.pk).update(active=False)
    else:
        target.delete()
    release.set()
    assert worker.wait_done(hold_id)[-1] == "delivered"
    assert worker.wait_done(target_id) == ["skipped"]
    assert {hit.path for hit in receiver.hits} == {"/hook"}
    assert not WebhookDelivery.objects.filter(delivery_id=target_id).exists()


def test_an_unsafe_url_gets_one_final_row_and_no_retry_from_the_worker(
    worker: Runs, receiver: Any
) -> None:
    # The private-address guard is on (the default): the loopback receiver is refused.
    with webhook_settings(BACKOFF_BASE=0.01, BACKOFF_CAP=0.05):
        WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
        [delivery_id] = WebhookManager().fire_sync("e", {})
        assert worker.wait_done(delivery_id) == ["failed"]
        time.sleep(0.3)  # room for a retry, which must not come
        assert worker.of(delivery_id) == ["failed"]
    assert receiver.hits == []
    [row] = WebhookDelivery.objects.all()
    assert row.final and not row.success and row.attempt == 1
    assert row.status_code is None
    assert "UnsafeWebhookUrlError" in (row.error or "")


def test_a_rolled_back_fire_queues_no_job_for_the_worker(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        [rolled_back_id] = WebhookManager().fire_sync("e", {"n": 1})
        1 / 0  # noqa: B018
    [committed_id] = WebhookManager().fire_sync("e", {"n": 2})
    # Jobs run in queue order on the single worker: the second one done, the first
    # would have been seen before it.
    assert worker.wait_done(committed_id) == ["delivered"]
    assert worker.of(rolled_back_id) == []
    assert [hit.headers["X-Webhook-Id"] for hit in receiver.hits] == [committed_id]
    assert list(WebhookDelivery.objects.values_list("delivery_id", flat=True)) == [committed_id]


def test_an_attempt_stopped_by_the_soft_time_limit_is_logged_and_retried(
    worker: Runs, receiver: Any, loopback_allowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's soft time limit (DEADLINE + 15 s) is what stops an attempt that stalls
    below the per-read timeouts (a name that never resolves, an answer dripping in):
    Celery raises SoftTimeLimitExceeded inside the job, mostly in the middle of the
    request. Such an attempt timed out: it gets its row and is retried like any other."""
    real = webhook_tasks.deliver_once
    calls: list[str] = []

    def stalled_first(url: str, event: str, body: bytes, secret: Any, delivery_id: str) -> Any:
        calls.append(delivery_id)
        if len(calls) == 1:
            raise SoftTimeLimitExceeded()
        return real(url, event, body, secret, delivery_id)

    monkeypatch.setattr(webhook_tasks, "deliver_once", stalled_first)
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    [delivery_id] = WebhookManager().fire_sync("e", {})
    assert worker.wait_done(delivery_id) == ["retry", "delivered"]
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(r.attempt, r.success, r.final) for r in rows] == [(1, False, False), (2, True, False)]
    assert rows[0].error
    assert len(receiver.hits) == 1


def test_the_queue_setting_routes_the_job_and_its_retries_to_that_queue(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    receiver.respond = lambda n: (500, {}, b"no") if n < 2 else (200, {}, b"ok")
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    with webhook_settings(QUEUE=ROUTED_QUEUE):
        [delivery_id] = WebhookManager().fire_sync("e", {})
        assert worker.wait_done(delivery_id) == ["retry", "retry", "delivered"]
    assert worker.queues[delivery_id] == [ROUTED_QUEUE] * 3


@pytest.fixture
def tenant_seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """delivery id -> the tenant current in the worker at each attempt."""
    seen: dict[str, list[Any]] = {}
    real = webhook_tasks.deliver_once

    def recording(url: str, event: str, body: bytes, secret: Any, delivery_id: str) -> Any:
        seen.setdefault(delivery_id, []).append(current_tenant_id())
        return real(url, event, body, secret, delivery_id)

    monkeypatch.setattr(webhook_tasks, "deliver_once", recording)
    return seen


def test_a_webhook_fired_under_a_tenant_is_delivered_under_that_tenant_on_every_attempt(
    worker: Runs, receiver: Any, loopback_allowed: None, tenant_seen: dict[str, list[Any]]
) -> None:
    receiver.respond = lambda n: (500, {}, b"no") if n < 2 else (200, {}, b"ok")
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    with as_tenant(2):
        [delivery_id] = WebhookManager().fire_sync("e", {})
    assert worker.wait_done(delivery_id) == ["retry", "retry", "delivered"]
    # The worker thread never entered tenant 2 itself: it came in the message headers,
    # and the retries published from the worker carried it on.
    assert tenant_seen[delivery_id] == [2, 2, 2]


def test_a_webhook_fired_with_no_tenant_is_delivered_with_none_after_a_tenant_job(
    worker: Runs, receiver: Any, loopback_allowed: None, tenant_seen: dict[str, list[Any]]
) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, event="e", secret="s")
    with as_tenant(2):
        [tenant_id] = WebhookManager().fire_sync("e", {"n": 1})
    with as_tenant(None):
        [plain_id] = WebhookManager().fire_sync("e", {"n": 2})
    assert worker.wait_done(tenant_id) == ["delivered"]
    assert worker.wait_done(plain_id) == ["delivered"]
    assert tenant_seen == {tenant_id: [2], plain_id: [None]}


# -- an outage: the endpoint disables, recovery re-sends each failed delivery once --------------
def _wait_last(worker: Runs, delivery_id: str, outcome: str, timeout: float = 15.0) -> list[str]:
    """``delivery_id``'s outcomes once the last is ``outcome`` (a recovered delivery runs
    again under the id whose first round already ended)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        outcomes = worker.of(delivery_id)
        if outcomes and outcomes[-1] == outcome:
            return outcomes
        time.sleep(0.02)
    return worker.of(delivery_id)


def test_an_outage_disables_the_endpoint_at_the_documented_point_and_recovery_sends_each_once(
    worker: Runs, receiver: Any, loopback_allowed: None
) -> None:
    """The receiver's /flaky path answers 503 for a while. With MAX_ATTEMPTS 3 and
    DISABLE_AFTER {FAILURES: 5, SECONDS: 0}, the fifth delivery that fails for good
    disables the endpoint (signal, owner's email); the sixth event no longer selects it.
    Once the receiver is back and the endpoint enabled, recovery sends each of the five
    failed deliveries exactly once more, under its original webhook-id."""
    from django.core import mail

    from appframework_webhooks import endpoint_disabled, whsec
    from appframework_webhooks.recovery import recover_deliveries
    from testproject.blog.models import User

    down = threading.Event()
    down.set()

    def respond(n: int) -> tuple[int, dict[str, str], bytes]:
        flaky = receiver.hits[n].path.endswith("/flaky")
        return (503, {}, b"down") if flaky and down.is_set() else (200, {}, b"ok")

    receiver.respond = respond
    owner = User.objects.create_user("hooks-owner@example.com", "pw")
    signals: list[Any] = []
    endpoint_disabled.connect(lambda sender, **kw: signals.append(kw), weak=False, dispatch_uid="t")
    settings = webhook_settings(
        ALLOWED_NETWORKS=["127.0.0.0/8"],
        BACKOFF_BASE=0.01,
        BACKOFF_CAP=0.05,
        MAX_ATTEMPTS=3,
        DISABLE_AFTER={"FAILURES": 5, "SECONDS": 0},
    )
    try:
        with settings:
            flaky = WebhookEndpoint.objects.create(
                url=f"{receiver.url}/flaky", event="order.*", secret=whsec("k" * 24), owner=owner
            )
            WebhookEndpoint.objects.create(url=f"{receiver.url}/ok", event="order.paid")
            started = timezone.now()
            selected = []
            for n in range(8):
                ids = WebhookManager().fire_sync("order.paid", {"id": n})
                selected.append(len(ids))
                for delivery_id in ids:
                    worker.wait_done(delivery_id)
            flaky.refresh_from_db()
            disabled = (flaky.active, flaky.failure_streak, flaky.disabled_reason)
            failed = set(
                WebhookDelivery.objects.filter(endpoint=flaky, final=True).values_list(
                    "delivery_id", flat=True
                )
            )
            flaky_hits = [h for h in receiver.hits if h.path.endswith("/flaky")]

            down.clear()
            flaky.active = True
            flaky.save()
            before = len(receiver.hits)
            assert recover_deliveries(flaky, started) == 5
            for delivery_id in failed:
                assert _wait_last(worker, delivery_id, "delivered") == [
                    "retry",
                    "retry",
                    "failed",
                    "delivered",
                ]
            recovered = [h for h in receiver.hits[before:] if h.path.endswith("/flaky")]
    finally:
        endpoint_disabled.disconnect(dispatch_uid="t")

    # Disabled at the documented point: the fifth delivery failed for good.
    assert selected == [2] * 5 + [1] * 3
    assert len(failed) == 5 and len(flaky_hits) == 15
    assert disabled == (False, 5, "failing")
    assert len(signals) == 1 and signals[0]["failures"] == 5
    assert [m.to for m in mail.outbox] == [["hooks-owner@example.com"]]
    # Recovery: each failed delivery exactly once, with its original id, signed.
    assert sorted(h.headers["webhook-id"] for h in recovered) == sorted(failed)
    assert all(verify_webhook(whsec("k" * 24), h.headers, h.body) for h in recovered)
    assert WebhookDelivery.objects.filter(endpoint=flaky, success=True).count() == 5
    assert WebhookEndpoint.objects.get(pk=flaky.pk).failure_streak == 0
