"""Admin: endpoints (URL and event checked when saved; rotate, recover, enable and
disable), the delivery log read-only, "send again"."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from appframework.exceptions import ValidationException

from .catalogue import catalogue
from .exceptions import UnsafeWebhookUrlError
from .health import disable_endpoint
from .models import WebhookDelivery, WebhookEndpoint
from .recovery import recover_deliveries
from .rotation import rotate_secret
from .signing import whsec
from .ssrf import ensure_safe_webhook_url

#: What the recover action covers when its "since" field is left empty.
DEFAULT_RECOVERY_WINDOW = datetime.timedelta(days=1)


class WebhookEndpointForm(forms.ModelForm):
    class Meta:
        model = WebhookEndpoint
        fields = ("url", "event", "description", "secret", "active", "tenant_id", "owner")
        widgets = {"secret": forms.PasswordInput(render_value=True)}

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        try:
            ensure_safe_webhook_url(url)
        except UnsafeWebhookUrlError as exc:
            raise ValidationError(str(exc), code="unsafe_webhook_url") from exc
        return url

    def clean_event(self) -> str:
        event: str = self.cleaned_data["event"]
        if self.instance.pk is not None and event == self.instance.event:
            return event  # an existing subscription is kept as it is (check W003 lists it)
        try:
            return catalogue.check_pattern(event)
        except ValidationException as exc:
            raise ValidationError(str(exc.detail), code=exc.code) from exc


class EndpointActionForm(ActionForm):
    since = forms.DateTimeField(
        required=False,
        label="since",
        help_text="Recover: failed deliveries since this time (default: the last 24 hours).",
    )


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    action_form = EndpointActionForm
    list_display = ("event", "url", "active", "signed", "tenant_id", "failure_streak")
    list_filter = ("active", "event", "disabled_reason")
    search_fields = ("url", "event", "description")
    raw_id_fields = ("owner",)
    readonly_fields = (
        "signing_secret",
        "previous_secret_expires_at",
        "failure_streak",
        "failing_since",
        "disabled_at",
        "disabled_reason",
        "created_at",
    )
    actions = ["rotate_secrets", "recover", "enable", "disable"]

    @admin.display(boolean=True, description="signed")
    def signed(self, obj: WebhookEndpoint) -> bool:
        return bool(obj.secret)

    @admin.display(description="secret (whsec_ form, for the receiver's library)")
    def signing_secret(self, obj: WebhookEndpoint) -> str:
        return whsec(obj.secret) if obj.secret else "—"

    @admin.action(description="Rotate the secret (the old one signs too for SECRET_OVERLAP)")
    def rotate_secrets(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            rotate_secret(endpoint)
        self.message_user(
            request,
            f"{len(queryset)} secret(s) rotated; each endpoint's page shows its new secret.",
            messages.SUCCESS,
        )

    @admin.action(description="Recover failed deliveries since the time given (once each)")
    def recover(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        field = forms.DateTimeField(required=False)
        try:
            since = field.clean(request.POST.get("since") or None)
        except ValidationError:
            self.message_user(request, "'since' is not a date and time.", messages.ERROR)
            return
        since = since or timezone.now() - DEFAULT_RECOVERY_WINDOW
        queued = 0
        for endpoint in queryset:
            try:
                queued += recover_deliveries(endpoint, since)
            except ValidationException as exc:
                self.message_user(request, f"{endpoint}: {exc.detail}", messages.WARNING)
        self.message_user(
            request, f"{queued} failed delivery(ies) since {since:%Y-%m-%d %H:%M} queued again."
        )

    @admin.action(description="Enable (clears the failure count)")
    def enable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset.filter(active=False):
            endpoint.active = True
            endpoint.save()
        self.message_user(request, "Enabled.", messages.SUCCESS)

    @admin.action(description="Disable")
    def disable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset.filter(active=True):
            disable_endpoint(endpoint)
        self.message_user(request, "Disabled.", messages.SUCCESS)


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
