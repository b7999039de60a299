"""Settings of the webhook chaos run (chaos_harness.py) and of the Celery workers it
starts: the test settings with a database every process shares (a SQLite file in
``WEBHOOKS_CHAOS_DIR``, or ``WEBHOOKS_CHAOS_DATABASE_URL``), a real Redis broker, a
short visibility timeout (a killed worker's jobs come back within seconds) and fast
retries whose longest wait stays far below it."""

from __future__ import annotations

import os
from pathlib import Path

from tests.settings import *  # noqa: F403
from tests.settings import APPFRAMEWORK, database_from_url

if os.environ.get("WEBHOOKS_CHAOS_DATABASE_URL"):
    DATABASES = {"default": database_from_url(os.environ["WEBHOOKS_CHAOS_DATABASE_URL"])}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(Path(os.environ["WEBHOOKS_CHAOS_DIR"]) / "chaos.sqlite3"),
            # Several worker processes write the delivery log while the harness reads it.
            "OPTIONS": {
                "timeout": 30,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
            },
        }
    }

CELERY_BROKER_URL = os.environ.get("WEBHOOKS_CHAOS_BROKER_URL", "redis://127.0.0.1:6379/13")
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_DEFAULT_QUEUE = "appframework-webhooks-chaos"
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 10,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    # A worker SIGKILLed while it scans for lost jobs keeps Kombu's restore lock until
    # this expires (300 s by default): no job of a killed worker would come back within
    # the run. The scan itself takes milliseconds.
    "unacked_mutex_expire": 5,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_HIJACK_ROOT_LOGGER = True
if os.environ.get("WEBHOOKS_CHAOS_EARLY_ACK") == "1":
    # Control run only (chaos_harness.py --early-ack): the job acknowledged on receipt,
    # as without the task's own options, to show the run detects lost deliveries.
    CELERY_TASK_ANNOTATIONS = {
        "appframework_webhooks.DeliverWebhookJob": {
            "acks_late": False,
            "reject_on_worker_lost": False,
        }
    }

APPFRAMEWORK = {
    **APPFRAMEWORK,
    "WEBHOOKS": {
        "ALLOWED_NETWORKS": ["127.0.0.0/8"],
        "BACKOFF_BASE": 0.2,
        "BACKOFF_CAP": 1.0,
        "CONNECT_TIMEOUT": 1.0,
        "READ_TIMEOUT": 1.0,
        "DEADLINE": 3.0,
    },
}
