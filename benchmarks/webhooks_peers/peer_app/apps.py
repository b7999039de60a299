from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings


class BenchConfig(AppConfig):
    name = "peer_app"
    label = "bench"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if settings.PEER == "django-webhook-subscriber":
            # The subscriber fires only when told to: here as it documents, from post_save.
            from . import signals

            signals.connect()
