"""``DeliverWebhookJob``: the Celery task that delivers one event to one endpoint.

Reliability settings are the task's own, not the host project's: late acknowledgement
and re-queueing when the worker dies (a SIGKILLed worker loses nothing; a receiver may
then see an attempt twice, which ``X-Webhook-Id`` lets it drop), no result stored, and
retries scheduled here with capped exponential backoff and jitter. The largest wait
(``BACKOFF_CAP`` x 1.2) must stay far below the broker's visibility timeout (Redis: one
hour by default), or the broker re-delivers the waiting task (docs/webhooks.md).
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from celery import Task, shared_task
from celery.exceptions import Reject
from django.db import InterfaceError, OperationalError, router

from appframework.conf import app_settings
from appframework.errors import is_outage

from .connection import kept_connection, relax_commit
from .delivery import AttemptResult, deliver_once, failed_attempt
from .schedule import WORKER_PUBLISH_RETRY, backoff, batch_wait, time_limits
from .signals import webhook_queue_failed
from .signing import SigningKeys, signing_keys
from .sql import EndpointRow, LogRow, insert_log_rows, read_endpoints

__all__ = [
    "FAN_OUT_THRESHOLD",
    "DeliverWebhookBatchJob",
    "DeliverWebhookJob",
    "FanOutWebhookJob",
    "comes_back_later",
    "publish",
    "publish_jobs",
]

logger = logging.getLogger("appframework.webhooks")


class _DeliverTask(Task):
    """The task class of ``DeliverWebhookJob``: ``DeliverWebhookJob.max_attempts`` is the
    attempts in total per delivery (``WEBHOOKS["MAX_ATTEMPTS"]``, 5 by default), read
    when asked so a settings change is seen."""

    @property
    def max_attempts(self) -> int:
        return max(1, int(app_settings.WEBHOOKS.MAX_ATTEMPTS))


def _keeps_connection(task: Any) -> bool:
    # Only a worker's task keeps a connection of its own; an eager or directly called
    # one runs in its caller's thread, on the caller's connection and transaction.
    request = task.request
    return not (getattr(request, "is_eager", False) or getattr(request, "called_directly", True))


def _read(ids: list[int], keep: bool) -> dict[int, EndpointRow]:
    from .models import WebhookEndpoint

    alias = router.db_for_read(WebhookEndpoint)
    try:
        with kept_connection(alias, keep=keep) as connection:
            return read_endpoints(connection, ids, prepared=keep)
    except (OperationalError, InterfaceError):
        if not keep:
            raise
        # A kept connection the server dropped (a restart, a failover): it was closed
        # on the error; the read is safe to repeat once on a new one.
        with kept_connection(alias, keep=keep) as connection:
            return read_endpoints(connection, ids, prepared=keep)


def _write_log(rows: list[LogRow], keep: bool) -> None:
    if not rows or not app_settings.WEBHOOKS.DELIVERY_LOG:
        return
    from .models import WebhookDelivery

    with kept_connection(router.db_for_write(WebhookDelivery), keep=keep) as connection:
        if keep and not app_settings.WEBHOOKS.DELIVERY_LOG_SYNCHRONOUS_COMMIT:
            relax_commit(connection)
        insert_log_rows(connection, rows, prepared=keep)


def _secret(row: EndpointRow) -> str | SigningKeys | None:
    """What an attempt signs with: the secret alone, or during a rotation's overlap the
    keys of both secrets (worked out once per pair of secrets and process)."""
    if row.previous_secret and row.secret:
        return signing_keys(row.secret, row.previous_secret)
    return row.secret


def _health(delivered: list[int], failed_for_good: list[int], keep: bool) -> None:
    """Forget the failures of endpoints that took a delivery; count (and maybe disable)
    those whose delivery failed for good. Never fails the job: the delivery is done."""
    if not delivered and not failed_for_good:
        return
    from .health import note_final_failures, reset_failure_streaks
    from .models import WebhookEndpoint

    try:
        with kept_connection(router.db_for_write(WebhookEndpoint), keep=keep):
            reset_failure_streaks(delivered)
            note_final_failures(failed_for_good)
    except Exception:
        logger.exception("Could not record the health of webhook endpoints.")


def _attempt(
    url: str,
    event: str,
    body: bytes,
    secret: str | SigningKeys | None,
    delivery_id: str,
    attempt: int,
    tenant_id: int | None = None,
) -> AttemptResult:
    # Named only for a tenant's endpoint: the operator's is deliver_once's default.
    owner = {} if tenant_id is None else {"tenant_id": tenant_id}
    try:
        return deliver_once(url, event, body, secret, delivery_id, **owner)
    except Exception as exc:
        # Whatever stopped the attempt (Celery's soft time limit on a receiver dripping
        # its answer, an unexpected error) it is logged and retried like a failed one:
        # a delivery never ends without a row saying why.
        logger.exception("Webhook %s (%s) attempt %s raised.", event, delivery_id, attempt)
        return failed_attempt(f"{type(exc).__name__}: {exc}")


def _log_row(
    endpoint_id: int,
    event: str,
    body: str,
    delivery_id: str,
    attempt: int,
    outcome: AttemptResult,
    final: bool,
) -> LogRow:
    return LogRow(
        endpoint_id=endpoint_id,
        event=event,
        status_code=outcome.status_code,
        success=outcome.success,
        error=outcome.error,
        delivery_id=delivery_id,
        attempt=attempt,
        duration_ms=outcome.duration_ms,
        request_body=body,
        response_body=outcome.response_body,
        final=final,
    )


def _is_final(outcome: AttemptResult, attempt: int, max_attempts: int) -> bool:
    return not outcome.success and (not outcome.retryable or attempt >= max_attempts)


def _report(
    event: str, delivery_id: str, url: str, attempt: int, outcome: AttemptResult, final: bool
) -> None:
    if outcome.success:
        return
    if final:
        logger.warning(
            "Webhook %s (%s) to %s failed for good after attempt %s: %s",
            event,
            delivery_id,
            url,
            attempt,
            outcome.error,
        )
    else:
        logger.info(
            "Webhook %s (%s) attempt %s failed: %s", event, delivery_id, attempt, outcome.error
        )


def _skipped(event: str, delivery_id: str, endpoint_id: int) -> None:
    logger.info(
        "Webhook %s (%s) skipped: endpoint %s disabled or deleted.", event, delivery_id, endpoint_id
    )


@shared_task(
    bind=True,
    base=_DeliverTask,
    name="appframework_webhooks.DeliverWebhookJob",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    max_retries=None,
)
def DeliverWebhookJob(self: Any, endpoint_id: int, event: str, body: str, delivery_id: str) -> str:
    """Deliver ``body`` (the exact serialized JSON) to endpoint ``endpoint_id``."""
    keep = _keeps_connection(self)
    endpoint = _read([endpoint_id], keep).get(endpoint_id)
    if endpoint is None:
        _skipped(event, delivery_id, endpoint_id)
        return "skipped"
    url = endpoint.url
    attempt = self.request.retries + 1
    max_attempts = self.max_attempts
    outcome = _attempt(
        url,
        event,
        body.encode("utf-8"),
        _secret(endpoint),
        delivery_id,
        attempt,
        endpoint.tenant_id,
    )
    final = _is_final(outcome, attempt, max_attempts)
    _write_log([_log_row(endpoint_id, event, body, delivery_id, attempt, outcome, final)], keep)
    _report(event, delivery_id, url, attempt, outcome, final)
    if outcome.success:
        if endpoint.failure_streak:
            _health([endpoint_id], [], keep)
        return "delivered"
    if final:
        _health([], [endpoint_id], keep)
        return "failed"
    try:
        raise self.retry(
            countdown=backoff(self.request.retries),
            max_retries=max_attempts - 1,
            retry_policy=WORKER_PUBLISH_RETRY,
        )
    except Reject as rejected:
        raise _put_back(rejected.reason) from rejected


def _put_back(reason: Any) -> Reject:
    """What a job raises when the broker did not take all it had to queue. Celery drops a
    message whose retry it could not publish; with the broker away (not a message it
    refused), or the job's time up while waiting for it, the job's own message goes back
    instead. The job runs again once the broker is back, or after the visibility timeout
    should putting it back fail too; what it had already queued is queued again."""
    if not comes_back_later(reason):
        return Reject(reason, requeue=False)
    logger.warning("The broker is away; the webhook job goes back to the queue: %s", reason)
    return Reject(reason, requeue=True)


#: This process's sending threads: (pid, size, pool); a forked child makes its own.
_senders: list[tuple[int, int, ThreadPoolExecutor]] = []
_senders_lock = threading.Lock()


def _sender_pool() -> ThreadPoolExecutor:
    """This process's BATCH_CONCURRENCY sending threads (a forked worker child makes
    its own), kept with their kept-alive connections from one batch to the next. Each
    takes the batch's next endpoint when free: a slow receiver holds one thread and
    the others go on without it."""
    size = max(1, int(app_settings.WEBHOOKS.BATCH_CONCURRENCY))
    pid = os.getpid()
    with _senders_lock:
        if _senders and _senders[0][:2] == (pid, size):
            return _senders[0][2]
        if _senders and _senders[0][0] == pid:
            _senders[0][2].shutdown(wait=False)  # BATCH_CONCURRENCY changed
        pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="webhook-send")
        _senders[:] = [(pid, size, pool)]
        return pool


@shared_task(
    bind=True,
    base=_DeliverTask,
    name="appframework_webhooks.DeliverWebhookBatchJob",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def DeliverWebhookBatchJob(self: Any, event: str, body: str, jobs: list[tuple[int, str]]) -> int:
    """First attempts of one event to many endpoints: one endpoint read, every endpoint
    sent at the same time (each its own deadline and log row), one log insert, and each
    failed endpoint queued again as its own DeliverWebhookJob (attempt 2, with backoff).
    A worker lost mid-batch re-sends the batch; receivers drop repeats by X-Webhook-Id.
    Returns how many were delivered."""
    keep = _keeps_connection(self)
    endpoints = _read([int(pk) for pk, _ in jobs], keep)
    payload = body.encode("utf-8")
    todo: list[tuple[int, str, str, str | SigningKeys | None, int | None]] = []
    for pk, delivery_id in jobs:
        found = endpoints.get(int(pk))
        if found is None:
            _skipped(event, delivery_id, int(pk))
        else:
            todo.append((int(pk), delivery_id, found.url, _secret(found), found.tenant_id))
    pool = _sender_pool()
    # Each send runs in a copy of this task's context (its tenant, for one).
    futures = [
        pool.submit(
            contextvars.copy_context().run,
            _attempt,
            url,
            event,
            payload,
            secret,
            delivery_id,
            1,
            tenant_id,
        )
        for _, delivery_id, url, secret, tenant_id in todo
    ]
    # Every attempt ends within its own limits; this bounds the wait should one not (its
    # thread then finishes on its own, and the delivery is retried like a timeout).
    wait(futures, timeout=batch_wait())
    max_attempts = self.max_attempts
    rows: list[LogRow] = []
    retry: list[tuple[int, str]] = []
    recovered: list[int] = []
    failed_for_good: list[int] = []
    delivered = 0
    for (pk, delivery_id, url, _, _), future in zip(todo, futures, strict=True):
        outcome = (
            future.result()
            if future.done()
            else failed_attempt("Timeout: the attempt outlived its deadline")
        )
        final = _is_final(outcome, 1, max_attempts)
        rows.append(_log_row(pk, event, body, delivery_id, 1, outcome, final))
        _report(event, delivery_id, url, 1, outcome, final)
        if outcome.success:
            delivered += 1
            if endpoints[pk].failure_streak:
                recovered.append(pk)
        elif final:
            failed_for_good.append(pk)
        else:
            retry.append((pk, delivery_id))
    _write_log(rows, keep)
    _health(recovered, failed_for_good, keep)
    if retry:
        try:
            publish_jobs(event, body, retry, attempt=2, in_worker=True)
        except Exception as exc:
            # The whole batch comes back, its delivered endpoints too: receivers drop
            # those repeats by X-Webhook-Id.
            raise _put_back(exc) from exc
    return delivered


@shared_task(
    bind=True,
    name="appframework_webhooks.FanOutWebhookJob",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def FanOutWebhookJob(self: Any, event: str, body: str, jobs: list[tuple[int, str]]) -> int:
    """Publish one DeliverWebhookJob per endpoint from a worker: a ``fire()`` to
    thousands of endpoints costs its caller one publish, not thousands."""
    try:
        return publish_jobs(event, body, jobs, in_worker=True)
    except Exception as exc:
        raise _put_back(exc) from exc


# -- queuing the jobs ----------------------------------------------------------------
#: Above this many messages (batches, or single jobs), fire() publishes one fan-out job
#: that queues them from a worker, instead of publishing them itself.
FAN_OUT_THRESHOLD = 20


def comes_back_later(exc: BaseException) -> bool:
    """Whether a job whose publish failed with ``exc`` should put its own message back:
    the broker is away, or the job's time ran out while waiting for it. Anything else (a
    message the broker refuses) would come back forever."""
    from celery.exceptions import SoftTimeLimitExceeded

    return is_outage(exc) or isinstance(exc, SoftTimeLimitExceeded)


def _task_options(in_worker: bool = False) -> dict[str, Any]:
    soft, hard = time_limits()
    options: dict[str, Any] = {"soft_time_limit": soft, "time_limit": hard}
    if app_settings.WEBHOOKS.QUEUE:
        options["queue"] = app_settings.WEBHOOKS.QUEUE
    if in_worker:
        options["retry_policy"] = WORKER_PUBLISH_RETRY
    return options


def _argsrepr(endpoint_id: int, event: str, delivery_id: str) -> str:
    # What monitoring (Flower, the worker's log) shows of a job: never the body, which
    # can hold personal data, and no repr of it to build for every publish.
    return f"({endpoint_id!r}, {event!r}, <body>, {delivery_id!r})"


def _publish_single(
    event: str, body: str, jobs: list[tuple[int, str]], attempt: int, in_worker: bool
) -> int:
    options = _task_options(in_worker)
    if attempt > 1:
        # What DeliverWebhookJob.retry would set: the attempt count and its backoff.
        options["retries"] = attempt - 1
    queued = 0
    for endpoint_id, delivery_id in jobs:
        try:
            if attempt > 1:
                options["countdown"] = backoff(attempt - 2)
            DeliverWebhookJob.apply_async(
                args=(endpoint_id, event, body, delivery_id),
                argsrepr=_argsrepr(endpoint_id, event, delivery_id),
                **options,
            )
        except Exception as exc:
            if in_worker and comes_back_later(exc):
                raise  # the job puts its own message back: nothing is lost
            logger.exception(
                "Could not queue webhook %s (%s) for endpoint %s.", event, delivery_id, endpoint_id
            )
            webhook_queue_failed.send(
                sender=DeliverWebhookJob,
                endpoint_id=endpoint_id,
                event=event,
                delivery_id=delivery_id,
                exception=exc,
            )
        else:
            queued += 1
    return queued


def _batches(jobs: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """``jobs`` cut into batches when there are BATCH_MIN_ENDPOINTS or more (and
    BATCH_SIZE above 1); an empty list when they go one job each."""
    conf = app_settings.WEBHOOKS
    size = int(conf.BATCH_SIZE)
    if size <= 1 or len(jobs) < max(2, int(conf.BATCH_MIN_ENDPOINTS)):
        return []
    return [jobs[start : start + size] for start in range(0, len(jobs), size)]


def publish_jobs(
    event: str,
    body: str,
    jobs: list[tuple[int, str]],
    *,
    attempt: int = 1,
    in_worker: bool = False,
) -> int:
    """Queue the delivery of ``body`` to each (endpoint id, delivery id): first attempts
    to BATCH_MIN_ENDPOINTS endpoints or more as DeliverWebhookBatchJob of up to
    BATCH_SIZE each, anything else (later attempts included: ``attempt``, queued with
    their backoff) as one DeliverWebhookJob per endpoint. Returns how many deliveries
    were queued; a failure is logged and reported and does not stop the others.

    ``in_worker``: called by a job, which can put its own message back when the broker
    is away. Publishing then waits longer for the broker, and a broker still away raises
    instead of dropping the deliveries (see ``is_outage``)."""
    batches = _batches(jobs) if attempt == 1 else []
    if not batches:
        return _publish_single(event, body, jobs, attempt, in_worker)
    options = _task_options(in_worker)
    queued = 0
    for batch in batches:
        try:
            DeliverWebhookBatchJob.apply_async(
                args=(event, body, batch),
                argsrepr=f"({event!r}, <{len(batch)} endpoints>)",
                **options,
            )
        except Exception as exc:
            if in_worker and comes_back_later(exc):
                raise
            logger.exception("Could not queue a batch of webhook %s; queuing each job.", event)
            queued += _publish_single(event, body, batch, attempt, in_worker)
        else:
            queued += len(batch)
    return queued


def publish(event: str, body: str, jobs: list[tuple[int, str]]) -> None:
    messages = len(_batches(jobs)) or len(jobs)
    if messages > FAN_OUT_THRESHOLD:
        try:
            FanOutWebhookJob.apply_async(
                args=(event, body, jobs),
                argsrepr=f"({event!r}, <{len(jobs)} endpoints>)",
                **_task_options(),
            )
            return
        except Exception:
            logger.exception("Could not queue the fan-out of webhook %s; queuing each job.", event)
    publish_jobs(event, body, jobs)
