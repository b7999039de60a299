"""The project's Celery app, the way both peers document it: configured from Django's
settings under the ``CELERY_`` namespace, tasks found by ``autodiscover_tasks()``. The
worker runs ``celery -A peer_app.celery_app:app worker`` with ``DJANGO_SETTINGS_MODULE``
set, so Celery's Django fix-up is installed (here and in the driver alike)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peer_app.settings")

app = Celery("peer_app")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
