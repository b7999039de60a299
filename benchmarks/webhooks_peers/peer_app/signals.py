"""django-webhook-subscriber's documented way to fire on creation: a ``post_save``
receiver calling ``send_webhooks(instance, "created")`` (django-webhook connects its own
``post_save`` receivers from its ``DJANGO_WEBHOOK["MODELS"]`` setting)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save

from .models import BenchItem


def item_saved(sender: type[BenchItem], instance: BenchItem, created: bool, **kwargs: Any) -> None:
    from django_webhook_subscriber import send_webhooks

    send_webhooks(instance, "created" if created else "updated")


def connect() -> None:
    post_save.connect(item_saved, sender=BenchItem, dispatch_uid="bench_item_saved")
