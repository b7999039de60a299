"""Settings of the peer's project. ``WEBHOOKS_PEER_CONFIG`` (JSON, from
``benchmarks/webhooks.py``) gives the database (a ``DATABASES`` entry) and the broker.

django-webhook at its defaults (``STORE_EVENTS``: a ``WebhookEvent`` row per delivery;
``USE_CACHE``: endpoint ids cached in process for a minute). Celery with the settings its
published measurements used, and the suite's "tuned" worker too: a connection kept across
up to 100 tasks (``CELERY_DB_REUSE_MAX``, read by Celery's Django fix-up) and prefetch 1.
"""

import json
import os

CONFIG = json.loads(os.environ["WEBHOOKS_PEER_CONFIG"])

SECRET_KEY = "webhooks-peer-benchmark"  # a throw-away project
DEBUG = False
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django_webhook",
    "peer_app",
]
DATABASES = {"default": CONFIG["database"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DJANGO_WEBHOOK = {"MODELS": ["peer_app.BenchItem"]}

CELERY_BROKER_URL = CONFIG["broker"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True  # silences a start-up warning
CELERY_DB_REUSE_MAX = 100
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
