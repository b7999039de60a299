"""Signals of the webhooks app."""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["endpoint_disabled", "webhook_queue_failed"]

#: Sent when a job could not be queued (``endpoint_id``, ``event``, ``delivery_id``,
#: ``exception``): the failure is reported here and logged, never raised to the caller.
webhook_queue_failed = Signal()

#: Sent once when an endpoint is disabled for failing (``endpoint``: the
#: ``WebhookEndpoint``, ``failures``: deliveries failed in a row, ``since``: when the
#: first of them failed), after the owner's email, if any, was sent. Receivers run
#: robustly: an error in one is logged, not raised into the delivery job.
endpoint_disabled = Signal()
