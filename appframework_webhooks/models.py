"""Webhook endpoints and the delivery log."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ["WebhookDelivery", "WebhookEndpoint"]


class WebhookEndpoint(models.Model):
    """One row per (url, event) pair; ``secret`` signs the deliveries (none: unsigned)."""

    url = models.CharField(_("URL"), max_length=2048)
    event = models.CharField(_("event"), max_length=255, db_index=True)
    secret = models.CharField(_("secret"), max_length=255, null=True, blank=True)
    active = models.BooleanField(_("active"), default=True)

    class Meta:
        db_table = "webhook_endpoints"
        verbose_name = _("webhook endpoint")
        indexes = [models.Index(fields=["event", "active"], name="webhook_event_active")]

    def __str__(self) -> str:
        return f"{self.event} → {self.url}"


class WebhookDelivery(models.Model):
    """One row per delivery attempt, retries included."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries", db_index=True
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
    # The exact bytes sent (what "send again" re-sends) and the start of the answer.
    request_body = models.TextField(_("request body"), blank=True, default="")
    response_body = models.TextField(_("response body"), blank=True, default="")
    final = models.BooleanField(_("final failure"), default=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "webhook_deliveries"
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        outcome = "ok" if self.success else ("failed" if self.final else "retrying")
        return f"{self.event} #{self.attempt} {outcome}"

    @property
    def error_code(self) -> str:
        """The outcome as a stable code (``http_503``, ``timeout``, ``unsafe_url``...),
        to show where ``error``, which can name internal addresses, must not be."""
        from .delivery import error_code

        return error_code(self.error, self.status_code)
