"""Signals of the webhooks app."""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["webhook_queue_failed"]

#: Sent when a job could not be queued (``endpoint_id``, ``event``, ``delivery_id``,
#: ``exception``): the failure is reported here and logged, never raised to the caller.
webhook_queue_failed = Signal()
