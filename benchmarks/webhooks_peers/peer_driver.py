"""The caller's side of django-webhook for ``benchmarks/webhooks.py``, which starts it
with the peers' virtualenv's python (``setup_env.sh``) and ``WEBHOOKS_PEER_CONFIG`` set.

    peer_driver.py RECEIVER_URL

Migrates the scratch database it is given, subscribes one webhook (with a secret) to the
creation of ``BenchItem`` rows, prints ``ready``; then for each number N read from stdin
creates N rows one by one in autocommit, as a user of django-webhook fires N events (its
``post_save`` receiver publishes one Celery task per webhook at once), and prints the
``time.monotonic()`` taken just before the first. The deliveries are the worker's, which
``webhooks.py`` starts and times. Exits at the end of stdin.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["DJANGO_SETTINGS_MODULE"] = "peer_app.settings"
SECRET = "benchmark-webhook-secret"


def main() -> int:
    import django

    # django-webhook's ready() counts its webhooks: Django's warning about it is noise here.
    warnings.filterwarnings("ignore", "Accessing the database during app initialization")
    django.setup()
    from django.core.management import call_command
    from django_webhook.models import (
        Webhook,
        WebhookSecret,
        WebhookTopic,
        populate_topics_from_settings,
    )
    from peer_app.models import BenchItem

    call_command("migrate", run_syncdb=True, verbosity=0)
    populate_topics_from_settings()  # its ready() skipped it: no tables yet
    webhook = Webhook.objects.create(url=sys.argv[1], active=True)
    webhook.topics.add(WebhookTopic.objects.get(name="peer_app.BenchItem/create"))
    WebhookSecret.objects.create(webhook=webhook, token=SECRET)
    print("ready", flush=True)
    for line in sys.stdin:
        t0 = time.monotonic()
        for i in range(int(line)):
            BenchItem.objects.create(name=f"item {i}")
        print(repr(t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
