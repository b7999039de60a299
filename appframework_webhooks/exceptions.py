"""Webhook exceptions."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from appframework.exceptions import ValidationException

__all__ = ["UnsafeWebhookUrlError"]


class UnsafeWebhookUrlError(ValidationException):
    """The receiver URL is not allowed: a non-public address, a scheme other than
    http/https, credentials in the URL. Raised before any connection and never retried;
    a 422 when it reaches the error mapping (an endpoint form, an API)."""

    default_detail = _("The webhook URL is not allowed.")
    default_code = "unsafe_webhook_url"
