"""Signed outbound webhooks: endpoints, firing after commit, Celery delivery with
retries, a delivery log, signatures, and a private-address guard."""

from __future__ import annotations

from typing import TYPE_CHECKING

from appframework.lazy_exports import lazy_exports

from .catalogue import EventCatalogue, WebhookEvent, catalogue
from .exceptions import UnsafeWebhookUrlError
from .signing import new_secret, verify_signature, verify_webhook, whsec

if TYPE_CHECKING:
    from .apps import WebhooksServiceProvider
    from .manager import WebhookManager, afire_webhook, fire_webhook
    from .models import WebhookDelivery, WebhookEndpoint
    from .signals import endpoint_disabled, webhook_queue_failed
    from .ssrf import ensure_safe_webhook_url
    from .tasks import DeliverWebhookJob

_EXPORTS = {
    "WebhooksServiceProvider": ".apps",
    "WebhookManager": ".manager",
    "afire_webhook": ".manager",
    "fire_webhook": ".manager",
    "webhook_queue_failed": ".signals",
    "endpoint_disabled": ".signals",
    "WebhookDelivery": ".models",
    "WebhookEndpoint": ".models",
    "ensure_safe_webhook_url": ".ssrf",
    "DeliverWebhookJob": ".tasks",
}

__all__ = [
    "DeliverWebhookJob",
    "EventCatalogue",
    "UnsafeWebhookUrlError",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookManager",
    "WebhooksServiceProvider",
    "afire_webhook",
    "catalogue",
    "endpoint_disabled",
    "ensure_safe_webhook_url",
    "fire_webhook",
    "new_secret",
    "verify_signature",
    "verify_webhook",
    "webhook_queue_failed",
    "whsec",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
