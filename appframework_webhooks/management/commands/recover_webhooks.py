"""``manage.py recover_webhooks <endpoint id> --since 24h`` (or an ISO date and time)."""

from __future__ import annotations

import datetime
import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from appframework.exceptions import ValidationException
from appframework_webhooks.models import WebhookEndpoint
from appframework_webhooks.recovery import recover_deliveries

_AGO = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(value: str) -> datetime.datetime:
    """``24h``, ``30m``, ``7d``, ``90s`` ago, or an ISO 8601 date and time (UTC when it
    names no offset)."""
    ago = _AGO.fullmatch(value.strip())
    if ago:
        seconds = float(ago.group(1)) * _UNITS[ago.group(2)]
        return timezone.now() - datetime.timedelta(seconds=seconds)
    parsed = parse_datetime(value.strip())
    if parsed is None:
        raise CommandError(f"--since {value!r}: a duration (24h, 30m, 7d) or an ISO date-time.")
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=datetime.UTC)


class Command(BaseCommand):
    help = (
        "Send every failed delivery of a webhook endpoint since a time once more, each once, "
        "with its original webhook-id."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", type=int, help="the endpoint's id")
        parser.add_argument(
            "--since", required=True, help="24h, 30m, 7d ago, or an ISO 8601 date-time"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        since = parse_since(options["since"])
        try:
            endpoint = WebhookEndpoint.objects.get(pk=options["endpoint"])
        except WebhookEndpoint.DoesNotExist:
            raise CommandError(f"No webhook endpoint {options['endpoint']}.") from None
        try:
            queued = recover_deliveries(endpoint, since)
        except ValidationException as exc:
            raise CommandError(str(exc.detail)) from exc
        self.stdout.write(f"{queued} failed delivery(ies) since {since.isoformat()} queued again.")
