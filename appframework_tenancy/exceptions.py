"""Tenancy's exceptions; each maps to an HTTP answer through the one error mapping."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from appframework.exceptions import ForbiddenException, NotFoundException

__all__ = ["TenantMismatch", "TenantRequired"]


class TenantRequired(NotFoundException):
    """Strict mode: a tenant-scoped query ran with no tenant selected.

    404 when it escapes a request: the client asked for data of no tenant, the way an
    unknown tenant subdomain is "not found" (the message never names a tenant).
    """

    default_detail = _("No tenant is selected for this request.")
    default_code = "tenant_required"


class TenantMismatch(ForbiddenException):
    """A write would touch, move or point at another tenant's row."""

    default_detail = _("This object belongs to another tenant.")
    default_code = "tenant_mismatch"
