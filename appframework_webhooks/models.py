"""Webhook endpoints and the delivery log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

__all__ = ["DISABLED_FAILING", "DISABLED_MANUALLY", "WebhookDelivery", "WebhookEndpoint"]

#: ``disabled_reason`` of an endpoint the health check disabled, and of one a person did.
DISABLED_FAILING = "failing"
DISABLED_MANUALLY = "manual"


class WebhookEndpoint(models.Model):
    """A receiver URL subscribed to one event pattern: a name, ``prefix.*`` or ``*``.

    ``secret`` signs the deliveries (none: unsigned); ``previous_secret`` signs them too
    until ``previous_secret_expires_at`` (a rotation's overlap). ``tenant_id`` is the
    tenant that owns it (None: an operator's endpoint, made in the admin); events fired
    under a tenant reach that tenant's endpoints and the operator's, never another
    tenant's. ``failure_streak`` counts the deliveries in a row that failed for good."""

    url = models.CharField(_("URL"), max_length=2048)
    event = models.CharField(
        _("event"),
        max_length=255,
        db_index=True,
        help_text=_("An event name, a prefix wildcard (order.*), or * for every event."),
    )
    secret = models.CharField(_("secret"), max_length=255, null=True, blank=True)
    active = models.BooleanField(_("active"), default=True)
    description = models.CharField(_("description"), max_length=255, blank=True, default="")
    tenant_id = models.BigIntegerField(_("tenant"), null=True, blank=True, db_index=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("owner"),
        help_text=_("Told by email when the endpoint is disabled for failing."),
    )
    previous_secret = models.CharField(
        _("previous secret"), max_length=255, null=True, blank=True, editable=False
    )
    previous_secret_expires_at = models.DateTimeField(
        _("previous secret expires at"), null=True, blank=True, editable=False
    )
    failure_streak = models.PositiveIntegerField(
        _("deliveries failed in a row"), default=0, editable=False
    )
    failing_since = models.DateTimeField(_("failing since"), null=True, blank=True, editable=False)
    disabled_at = models.DateTimeField(_("disabled at"), null=True, blank=True, editable=False)
    disabled_reason = models.CharField(
        _("disabled because"), max_length=32, blank=True, default="", editable=False
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "webhook_endpoints"
        verbose_name = _("webhook endpoint")
        indexes = [models.Index(fields=["event", "active"], name="webhook_event_active")]

    def __str__(self) -> str:
        return f"{self.event} → {self.url}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Turned off by hand (the admin's checkbox, the API): say so. Turned back on:
        # its failures are forgotten and the next one starts a new count.
        health = self._health_on_save()
        fields = kwargs.get("update_fields")
        if health and fields is not None:
            kwargs["update_fields"] = {*fields, *health}
        super().save(*args, **kwargs)

    def _health_on_save(self) -> list[str]:
        if not self.active and self.disabled_at is None:
            self.disabled_at = timezone.now()
            self.disabled_reason = self.disabled_reason or DISABLED_MANUALLY
            return ["disabled_at", "disabled_reason"]
        if self.active and self.disabled_at is not None:
            self.failure_streak = 0
            self.failing_since = None
            self.disabled_at = None
            self.disabled_reason = ""
            return ["failure_streak", "failing_since", "disabled_at", "disabled_reason"]
        return []


class WebhookDelivery(models.Model):
    """One row per delivery attempt, retries included."""

    endpoint = models.ForeignKey(
        WebhookEndpoint,
        on_delete=models.CASCADE,
        related_name="deliveries",
        # Served by the (endpoint, created_at) index below: one index per row written.
        db_index=False,
    )
    event = models.CharField(_("event"), max_length=255)
    status_code = models.IntegerField(_("status code"), null=True, blank=True)
    success = models.BooleanField(_("success"), default=False)
    error = models.CharField(_("error"), max_length=2000, null=True, blank=True)
    # Beyond the minimal log: which delivery (stable across retries, X-Webhook-Id), which
    # attempt, how long it took, the start of the answer, and whether it was the last try.
    delivery_id = models.CharField(_("delivery id"), max_length=64, db_index=True, default="")
    attempt = models.PositiveSmallIntegerField(_("attempt"), default=1)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), default=0)
    # The exact bytes sent (what "send again" and recovery re-send) and the start of the
    # answer.
    request_body = models.TextField(_("request body"), blank=True, default="")
    response_body = models.TextField(_("response body"), blank=True, default="")
    final = models.BooleanField(_("final failure"), default=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "webhook_deliveries"
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["endpoint", "created_at"], name="webhook_delivery_endpoint")
        ]

    def __str__(self) -> str:
        outcome = "ok" if self.success else ("failed" if self.final else "retrying")
        return f"{self.event} #{self.attempt} {outcome}"

    @property
    def error_code(self) -> str:
        """The outcome as a stable code (``http_503``, ``timeout``, ``unsafe_url``...),
        to show where ``error``, which can name internal addresses, must not be."""
        from .delivery import error_code

        return error_code(self.error, self.status_code)
