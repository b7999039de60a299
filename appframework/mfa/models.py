"""``MfaEnrollable``: the TOTP columns of the user model."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from ..model_meta import without_own_meta

__all__ = ["HIDDEN_FIELDS", "MfaEnrollable"]

#: Never shown in forms, admin pages, serializers, logs or error messages.
HIDDEN_FIELDS = ("mfa_secret", "mfa_recovery_codes")


@without_own_meta
class MfaEnrollable(models.Model):
    """Adds ``mfa_secret`` (base32, hidden), ``mfa_enabled``, ``mfa_recovery_codes``
    (hashes, hidden) and ``mfa_last_counter`` (the last consumed 30-second step; set it
    to None in your model to go without replay protection).

    The hidden columns are ``editable=False``: no ModelForm or admin form includes them,
    and check ``appframework.E010`` refuses an admin that lists them.
    """

    mfa_secret = models.CharField(
        _("TOTP secret"), max_length=64, null=True, blank=True, editable=False
    )
    mfa_enabled = models.BooleanField(_("two-factor enabled"), default=False)
    mfa_recovery_codes = models.JSONField(
        _("recovery code hashes"), null=True, blank=True, editable=False
    )
    mfa_last_counter = models.BigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True
