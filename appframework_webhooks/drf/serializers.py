"""What the endpoint API reads and writes. The secret is never listed: it is shown once
when an endpoint is created or its secret rotated, and on ``GET .../secret/``."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from appframework.exceptions import ValidationException
from appframework_tenancy.context import current_tenant_id

from ..catalogue import catalogue
from ..exceptions import UnsafeWebhookUrlError
from ..models import WebhookDelivery, WebhookEndpoint
from ..rotation import MAX_OVERLAP
from ..ssrf import ensure_safe_webhook_url

__all__ = [
    "DeliverySerializer",
    "EndpointSerializer",
    "RecoverSerializer",
    "RotateSerializer",
]


def _refused(exc: ValidationException) -> serializers.ValidationError:
    return serializers.ValidationError(str(exc.detail), code=exc.code)


class EndpointSerializer(serializers.ModelSerializer[WebhookEndpoint]):
    """An endpoint of the current tenant. ``url`` passes the private-address guard when
    written; ``event`` is a catalogue name, a prefix wildcard (``order.*``) or ``*``;
    ``secret`` may be given on creation (``whsec_...``), else one is made."""

    url = serializers.URLField(max_length=2048)
    secret = serializers.CharField(
        write_only=True, required=False, min_length=24, max_length=255, trim_whitespace=True
    )

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "event",
            "description",
            "active",
            "secret",
            "failure_streak",
            "failing_since",
            "disabled_at",
            "disabled_reason",
            "previous_secret_expires_at",
            "created_at",
        ]
        read_only_fields = [
            "id",
            "failure_streak",
            "failing_since",
            "disabled_at",
            "disabled_reason",
            "previous_secret_expires_at",
            "created_at",
        ]

    def validate_url(self, value: str) -> str:
        try:
            # Every endpoint of this API is a tenant's: ALLOWED_NETWORKS do not open to it.
            ensure_safe_webhook_url(value, tenant_id=current_tenant_id())
        except UnsafeWebhookUrlError as exc:
            raise _refused(exc) from exc
        return value

    def validate_event(self, value: str) -> str:
        try:
            return catalogue.check_pattern(value)
        except ValidationException as exc:
            raise _refused(exc) from exc

    def validate_secret(self, value: str) -> str:
        if self.instance is not None:
            raise serializers.ValidationError(
                "Change the secret with rotate-secret: it keeps the old one valid for a while.",
                code="read_only",
            )
        return value


class RotateSerializer(serializers.Serializer[Any]):
    overlap = serializers.FloatField(required=False, min_value=0, max_value=MAX_OVERLAP)
    secret = serializers.CharField(required=False, min_length=24, max_length=255)


class RecoverSerializer(serializers.Serializer[Any]):
    since = serializers.DateTimeField()


class DeliverySerializer(serializers.ModelSerializer[WebhookDelivery]):
    """One attempt of the endpoint's log. The error shows as its code only: the message
    can name addresses of the sender's own network."""

    error_code = serializers.CharField(read_only=True)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        # The receiver's answer can be an internal service's page: only those who may
        # manage the endpoint read it (context ``show_response``), never a plain member.
        if not self.context.get("show_response"):
            fields.pop("response_body", None)
        return fields

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "delivery_id",
            "event",
            "attempt",
            "success",
            "final",
            "status_code",
            "error_code",
            "duration_ms",
            "request_body",
            "response_body",
            "created_at",
        ]
        read_only_fields = fields
