"""The peer's Django project and its one app (``benchmarks/webhooks_peers/peer_driver.py``
and the peer's Celery worker, ``celery -A peer_app worker``).

The Celery app is made here, as django-webhook documents it: it must be Celery's current
app before Django imports django-webhook's tasks (declared with ``current_app.task``).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peer_app.settings")
app = Celery("peer_app")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
