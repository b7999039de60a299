"""Admin: endpoints (URL checked when saved), the delivery log read-only, "send again"."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from .exceptions import UnsafeWebhookUrlError
from .models import WebhookDelivery, WebhookEndpoint
from .ssrf import ensure_safe_webhook_url


class WebhookEndpointForm(forms.ModelForm):
    class Meta:
        model = WebhookEndpoint
        fields = ("url", "event", "secret", "active")
        widgets = {"secret": forms.PasswordInput(render_value=True)}

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        try:
            ensure_safe_webhook_url(url)
        except UnsafeWebhookUrlError as exc:
            raise ValidationError(str(exc), code="unsafe_webhook_url") from exc
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ("event", "url", "active", "signed")
    list_filter = ("active", "event")
    search_fields = ("url", "event")

    @admin.display(boolean=True, description="signed")
    def signed(self, obj: WebhookEndpoint) -> bool:
        return bool(obj.secret)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = (
        "created_at",
        "event",
        "endpoint",
        "attempt",
        "success",
        "final",
        "status_code",
        "duration_ms",
    )
    list_filter = ("success", "final", "event", "status_code")
    search_fields = ("delivery_id", "event", "endpoint__url")
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    actions = ["send_again"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Send again (a new delivery of the same body)")
    def send_again(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        from .tasks import publish_jobs

        sent = 0
        for delivery in queryset.select_related("endpoint"):
            if not delivery.request_body:
                continue
            sent += publish_jobs(
                delivery.event, delivery.request_body, [(delivery.endpoint_id, uuid.uuid4().hex)]
            )
        self.message_user(request, f"{sent} delivery(ies) queued.", messages.SUCCESS)
