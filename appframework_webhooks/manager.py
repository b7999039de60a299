"""Firing webhooks: ``WebhookManager.fire`` (async) / ``fire_sync``, and
``fire_webhook`` / ``afire_webhook`` inside a request."""

from __future__ import annotations

import contextvars
import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any

from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.http import HttpRequest

from appframework.exceptions import ValidationException
from appframework_tenancy.context import acting_tenant_id

from .catalogue import EVENT_NAME, catalogue
from .sql import subscribed_endpoint_ids
from .tasks import publish

__all__ = [
    "WebhookManager",
    "afire_webhook",
    "fire_webhook",
    "serialize",
]

logger = logging.getLogger("appframework.webhooks")


def serialize(event_name: Any, data: Any) -> str:
    """The request body, ``{"event": ..., "data": ...}``, serialized once for every
    endpoint (each signature covers exactly these bytes)."""
    if not isinstance(event_name, str) or not EVENT_NAME.fullmatch(event_name):
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
        """Queue one delivery per active endpoint subscribed to ``event_name`` (by name,
        prefix wildcard or ``*``) once the current transaction commits (at once outside a
        transaction; nothing if it rolls back). Under a tenant, that tenant's endpoints
        and the operator's (no tenant); with none, the operator's only, and so under a
        resolver's ``public_tenant`` fallback (an anonymous sign-up is no tenant's
        event). One query; returns the delivery ids (``webhook-id``)."""
        body = serialize(event_name, data)
        catalogue.check_fired(event_name)
        alias = using or DEFAULT_DB_ALIAS
        endpoint_ids = subscribed_endpoint_ids(connections[alias], event_name, acting_tenant_id())
        if not endpoint_ids:
            return []
        jobs = [(pk, uuid.uuid4().hex) for pk in endpoint_ids]
        # The jobs are published under the caller's context (its tenant, for one), not
        # whatever is current when the outermost transaction commits.
        context = contextvars.copy_context()
        transaction.on_commit(
            lambda: context.run(publish, event_name, body, jobs), using=alias, robust=True
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
