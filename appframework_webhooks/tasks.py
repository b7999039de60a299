"""``DeliverWebhookJob``: the Celery task that delivers one event to one endpoint.

Reliability settings are the task's own, not the host project's: late acknowledgement
and re-queueing when the worker dies (a SIGKILLed worker loses nothing; a receiver may
then see an attempt twice, which ``X-Webhook-Id`` lets it drop), no result stored, and
retries scheduled here with capped exponential backoff and jitter. The largest wait
(``BACKOFF_CAP`` x 1.2) must stay far below the broker's visibility timeout (Redis: one
hour by default), or the broker re-delivers the waiting task (docs/webhooks.md).
"""

from __future__ import annotations

import logging
import random
from typing import Any

from celery import Task, shared_task

from appframework.conf import app_settings

from .delivery import AttemptResult, deliver_once, failed_attempt

__all__ = ["MAX_JITTER", "DeliverWebhookJob", "FanOutWebhookJob", "backoff", "time_limits"]

logger = logging.getLogger("appframework.webhooks")


#: Retries wait their backoff times a factor within 1 +- JITTER; so at most
#: BACKOFF_CAP x MAX_JITTER.
JITTER = 0.2
MAX_JITTER = 1 + JITTER


def time_limits() -> tuple[float, float]:
    """Celery's (soft, hard) time limits of one attempt: the reading deadline plus room
    for the DNS lookup, the log write and the retry publish."""
    deadline = float(app_settings.WEBHOOKS.DEADLINE)
    return deadline + 15, deadline + 30


def backoff(retries: int) -> float:
    """Seconds before retry number ``retries + 1``: BASE x 2^retries, capped, ±20 %."""
    conf = app_settings.WEBHOOKS
    delay = min(float(conf.BACKOFF_CAP), float(conf.BACKOFF_BASE) * 2**retries)
    return delay * random.uniform(1 - JITTER, MAX_JITTER)


def _log(
    endpoint: Any,
    event: str,
    body: str,
    delivery_id: str,
    attempt: int,
    outcome: AttemptResult,
    final: bool,
) -> None:
    if not app_settings.WEBHOOKS.DELIVERY_LOG:
        return
    from .models import WebhookDelivery

    WebhookDelivery.objects.create(
        endpoint=endpoint,
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


class _DeliverTask(Task):
    """The task class of ``DeliverWebhookJob``: ``DeliverWebhookJob.max_attempts`` is the
    attempts in total per delivery (``WEBHOOKS["MAX_ATTEMPTS"]``, 5 by default), read
    when asked so a settings change is seen."""

    @property
    def max_attempts(self) -> int:
        return max(1, int(app_settings.WEBHOOKS.MAX_ATTEMPTS))


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
    from .models import WebhookEndpoint

    endpoint = (
        WebhookEndpoint.objects.filter(pk=endpoint_id, active=True)
        .only("pk", "url", "secret")
        .order_by()
        .first()
    )
    if endpoint is None:
        logger.info(
            "Webhook %s (%s) skipped: endpoint %s disabled or deleted.",
            event,
            delivery_id,
            endpoint_id,
        )
        return "skipped"
    attempt = self.request.retries + 1
    max_attempts = self.max_attempts
    try:
        outcome = deliver_once(
            endpoint.url, event, body.encode("utf-8"), endpoint.secret, delivery_id
        )
    except Exception as exc:
        # Whatever stopped the attempt (Celery's soft time limit on a receiver dripping
        # its answer, an unexpected error) it is logged and retried like a failed one:
        # a delivery never ends without a row saying why.
        logger.exception("Webhook %s (%s) attempt %s raised.", event, delivery_id, attempt)
        outcome = failed_attempt(f"{type(exc).__name__}: {exc}")
    final = not outcome.success and (not outcome.retryable or attempt >= max_attempts)
    _log(endpoint, event, body, delivery_id, attempt, outcome, final)
    if outcome.success:
        return "delivered"
    if final:
        logger.warning(
            "Webhook %s (%s) to %s failed for good after attempt %s: %s",
            event,
            delivery_id,
            endpoint.url,
            attempt,
            outcome.error,
        )
        return "failed"
    logger.info("Webhook %s (%s) attempt %s failed: %s", event, delivery_id, attempt, outcome.error)
    raise self.retry(countdown=backoff(self.request.retries), max_retries=max_attempts - 1)


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
    from .manager import publish_jobs

    return publish_jobs(event, body, jobs)
