"""``manage.py rotate_webhook_secret <endpoint id> [--overlap SECONDS] [--secret S]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from appframework.exceptions import ValidationException
from appframework_webhooks.models import WebhookEndpoint
from appframework_webhooks.rotation import rotate_secret
from appframework_webhooks.signing import whsec


class Command(BaseCommand):
    help = (
        "Give a webhook endpoint a new secret; the old one keeps signing beside it for the "
        "overlap. Prints the new secret in the whsec_ form the receiver's library takes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", type=int, help="the endpoint's id")
        parser.add_argument(
            "--overlap",
            type=float,
            default=None,
            help="seconds the old secret keeps signing (default: WEBHOOKS['SECRET_OVERLAP'])",
        )
        parser.add_argument("--secret", default=None, help="the new secret (default: random)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            endpoint = WebhookEndpoint.objects.get(pk=options["endpoint"])
        except WebhookEndpoint.DoesNotExist:
            raise CommandError(f"No webhook endpoint {options['endpoint']}.") from None
        try:
            secret = rotate_secret(endpoint, secret=options["secret"], overlap=options["overlap"])
        except ValidationException as exc:
            raise CommandError(str(exc.detail)) from exc
        until = endpoint.previous_secret_expires_at
        self.stdout.write(whsec(secret))
        if until is not None:
            self.stderr.write(f"The previous secret signs too until {until.isoformat()}.")
