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
from appframework.mfa.admin import HiddenFieldsAdminMixin, lookup_touches_secret

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
    """The secret is write-only: the page never renders it (a staff user who can open
    the form must not be able to read it back); a value typed in replaces it."""

    secret = forms.CharField(
        label="secret",
        required=False,
        max_length=255,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=(
            "Write-only. On a new endpoint: empty leaves it unsigned. On an existing one: "
            "empty keeps the current secret; a value replaces it (the old one keeps "
            "signing for SECRET_OVERLAP, as the rotate action does)."
        ),
    )

    class Meta:
        model = WebhookEndpoint
        fields = ("url", "event", "description", "active", "tenant_id", "owner")

    #: What was typed into the secret field ("" for nothing).
    typed_secret = ""

    def clean_secret(self) -> str | None:
        self.typed_secret = self.cleaned_data.get("secret") or ""
        if self.instance.pk is not None:
            # The admin rotates to a typed secret after saving (the old one keeps signing).
            return self.instance.secret
        return self.typed_secret or None

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


def _show_once(admin_site: admin.ModelAdmin, request: HttpRequest, endpoint: Any) -> None:
    admin_site.message_user(
        request,
        f"{endpoint}: its signing secret, shown this once (give it to the receiver): "
        f"{whsec(endpoint.secret)}",
        messages.SUCCESS,
    )


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(HiddenFieldsAdminMixin, admin.ModelAdmin):
    """Secrets are never rendered (shown once in a message when set or rotated) and a
    changelist lookup on them (``?secret__startswith=``) is refused with a 400, as for
    the TOTP columns: otherwise a staff user reads them one character at a time."""

    secret_fields = ("secret", "previous_secret")
    form = WebhookEndpointForm
    action_form = EndpointActionForm
    list_display = ("event", "url", "active", "signed", "tenant_id", "failure_streak")
    list_filter = ("active", "event", "disabled_reason")
    search_fields = ("url", "event", "description")
    raw_id_fields = ("owner",)
    readonly_fields = (
        "signed",
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

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        typed = form.typed_secret
        if typed and change:
            rotate_secret(obj, secret=typed)
        if typed:
            _show_once(self, request, obj)

    @admin.action(description="Rotate the secret (the old one signs too for SECRET_OVERLAP)")
    def rotate_secrets(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            rotate_secret(endpoint)
            _show_once(self, request, endpoint)

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


#: What a receiver answered: it may echo a customer's data, so only staff who may change
#: endpoints (or superusers) read it; view permission on the log shows everything else.
RESTRICTED_DELIVERY_FIELDS = ("response_body",)


def _may_read_response_bodies(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_superuser or user.has_perm("appframework_webhooks.change_webhookendpoint"))


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

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = super().get_fields(request, obj)
        if _may_read_response_bodies(request):
            return fields
        return [name for name in fields if name not in RESTRICTED_DELIVERY_FIELDS]

    def lookup_allowed(self, lookup: str, value: Any, request: Any = None) -> bool:
        # Else a changelist filter (?response_body__startswith=) reads the body back.
        if (
            request is not None
            and not _may_read_response_bodies(request)
            and lookup_touches_secret(lookup, RESTRICTED_DELIVERY_FIELDS)
        ):
            return False
        return bool(super().lookup_allowed(lookup, value, request))

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
