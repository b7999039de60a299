"""Firing webhooks: ``WebhookManager.fire`` (async) / ``fire_sync``, and
``fire_webhook`` / ``afire_webhook`` inside a request."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from collections.abc import Mapping
from typing import Any

from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.dispatch import Signal
from django.http import HttpRequest

from appframework.conf import app_settings
from appframework.exceptions import ValidationException
from appframework.middleware import is_outage

from ._sql import subscribed_endpoint_ids

__all__ = [
    "FAN_OUT_THRESHOLD",
    "WebhookManager",
    "afire_webhook",
    "fire_webhook",
    "publish_jobs",
    "webhook_queue_failed",
]

logger = logging.getLogger("appframework.webhooks")

#: Sent when a job could not be queued (``endpoint_id``, ``event``, ``delivery_id``,
#: ``exception``): the failure is reported here and logged, never raised to the caller.
webhook_queue_failed = Signal()

# Visible ASCII, inner spaces allowed: a header value every HTTP client can send.
_EVENT_NAME = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?")

#: Above this many messages (batches, or single jobs), fire() publishes one fan-out job
#: that queues them from a worker, instead of publishing them itself.
FAN_OUT_THRESHOLD = 20


#: How a job running on a worker retries publishing while the broker is away (kombu's
#: retry policy): about ten seconds, counted in its time limits, before it puts its own
#: message back instead.
WORKER_PUBLISH_RETRY = {
    "max_retries": 5,
    "interval_start": 0.5,
    "interval_step": 1.0,
    "interval_max": 3.0,
}


def comes_back_later(exc: BaseException) -> bool:
    """Whether a job whose publish failed with ``exc`` should put its own message back:
    the broker is away, or the job's time ran out while waiting for it. Anything else (a
    message the broker refuses) would come back forever."""
    from celery.exceptions import SoftTimeLimitExceeded

    return is_outage(exc) or isinstance(exc, SoftTimeLimitExceeded)


def publish_window() -> float:
    """The longest a worker's publish waits for the broker: the sum of the retry policy's
    sleeps (kombu's schedule: start, start + step, ..., each at most interval_max)."""
    policy = WORKER_PUBLISH_RETRY
    return sum(
        min(policy["interval_max"], policy["interval_start"] + n * policy["interval_step"])
        for n in range(int(policy["max_retries"]))
    )


def _task_options(in_worker: bool = False) -> dict[str, Any]:
    from .tasks import time_limits

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
    from .tasks import DeliverWebhookJob, backoff

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
                sender=WebhookManager,
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
    from .tasks import DeliverWebhookBatchJob

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


def _publish(event: str, body: str, jobs: list[tuple[int, str]]) -> None:
    messages = len(_batches(jobs)) or len(jobs)
    if messages > FAN_OUT_THRESHOLD:
        from .tasks import FanOutWebhookJob

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


def serialize(event_name: Any, data: Any) -> str:
    """The request body, ``{"event": ..., "data": ...}``, serialized once for every
    endpoint (each signature covers exactly these bytes)."""
    if not isinstance(event_name, str) or not _EVENT_NAME.fullmatch(event_name):
        raise ValidationException(
            "event_name: 1 to 255 visible ASCII characters (it travels in the "
            "X-Webhook-Event header), spaces only inside.",
            code="invalid_event",
        )
    if not isinstance(data, Mapping):
        raise ValidationException("data: a JSON object (a dict).", code="invalid_data")
    try:
        body = json.dumps(
            {"event": event_name, "data": data},
            cls=DjangoJSONEncoder,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,  # NaN/Infinity are not JSON: strict receivers reject them
        )
        body.encode("utf-8")  # a lone surrogate would only fail inside the job
    except (TypeError, ValueError) as exc:
        raise ValidationException(
            f"data is not JSON-serializable: {exc}", code="invalid_data"
        ) from exc
    return body


class WebhookManager:
    """Bound in the container by ``WebhooksServiceProvider``."""

    def fire_sync(
        self, event_name: str, data: Mapping[str, Any], *, using: str | None = None
    ) -> list[str]:
        """Queue one delivery per active endpoint subscribed to ``event_name`` once the
        current transaction commits (at once outside a transaction; nothing if it rolls
        back). One query; returns the delivery ids (``X-Webhook-Id``)."""
        body = serialize(event_name, data)
        alias = using or DEFAULT_DB_ALIAS
        endpoint_ids = subscribed_endpoint_ids(connections[alias], event_name)
        if not endpoint_ids:
            return []
        jobs = [(pk, uuid.uuid4().hex) for pk in endpoint_ids]
        # The jobs are published under the caller's context (its tenant, for one), not
        # whatever is current when the outermost transaction commits.
        context = contextvars.copy_context()
        transaction.on_commit(
            lambda: context.run(_publish, event_name, body, jobs), using=alias, robust=True
        )
        return [delivery_id for _, delivery_id in jobs]

    async def fire(
        self, event_name: str, data: Mapping[str, Any], *, using: str | None = None
    ) -> list[str]:
        return await sync_to_async(self.fire_sync)(event_name, data, using=using)


def _manager() -> WebhookManager:
    from appframework.container import container

    if WebhookManager in container:
        manager: WebhookManager = container.resolve(WebhookManager)
        return manager
    return WebhookManager()


def fire_webhook(
    request: HttpRequest | None, event_name: str, data: Mapping[str, Any]
) -> list[str]:
    """Fire from a view: the deliveries leave when the request's transaction commits."""
    return _manager().fire_sync(event_name, data)


async def afire_webhook(
    request: HttpRequest | None, event_name: str, data: Mapping[str, Any]
) -> list[str]:
    return await _manager().fire(event_name, data)
