"""Settings of the peers' project, shared by ``peer_driver.py`` and its worker.

What varies comes from the ``WEBHOOKS_PEER_CONFIG`` environment variable (JSON, written by
the driver): ``peer`` (``django-webhook`` or ``django-webhook-subscriber``), ``database``
(a Django ``DATABASES`` entry), ``broker`` (a Redis URL) and ``tuned`` (bool).

Celery: its defaults (no result backend, prefetch multiplier 4, the Django fix-up closing
the database connection around every task), or with ``tuned``: ``CELERY_DB_REUSE_MAX = 100``
(what the fix-up reads: a connection is kept across up to 100 tasks) and
``worker_prefetch_multiplier = 1``. Each peer's own settings are left at their defaults,
delivery/event logs included.
"""

from __future__ import annotations

import json
import os
from typing import Any

CONFIG: dict[str, Any] = json.loads(os.environ["WEBHOOKS_PEER_CONFIG"])
PEER: str = CONFIG["peer"]
PEER_APPS = {
    "django-webhook": "django_webhook",
    "django-webhook-subscriber": "django_webhook_subscriber",
}

SECRET_KEY = "webhooks-peer-benchmark"  # a throw-away project
DEBUG = False
USE_TZ = True
ALLOWED_HOSTS: list[str] = []
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    PEER_APPS[PEER],
    "peer_app.apps.BenchConfig",
]
DATABASES = {"default": CONFIG["database"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGGING = {"version": 1, "disable_existing_loggers": False}

# -- Celery (namespace CELERY_) ---------------------------------------------------------------
CELERY_BROKER_URL = CONFIG["broker"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True  # silences a start-up warning, nothing else
if CONFIG["tuned"]:
    CELERY_DB_REUSE_MAX = 100
    CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# -- the peers: their defaults; the bench model is the one they watch -------------------------
if PEER == "django-webhook":
    # STORE_EVENTS (a WebhookEvent row per delivery) and USE_CACHE (endpoint ids cached in
    # process for 1 minute) are on by default.
    DJANGO_WEBHOOK = {"MODELS": ["bench.BenchItem"]}
else:
    # Defaults: AUTO_CLEANUP of old delivery logs on every log write, subscriptions cached
    # for 300 s in Django's default cache (local memory here: no CACHES setting).
    WEBHOOK_SUBSCRIBER: dict[str, Any] = {}
