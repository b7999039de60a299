"""``Passkey``: a WebAuthn credential registered to a user."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ["Passkey"]


class Passkey(models.Model):
    """One credential of one user; a user may hold several (a phone, a laptop, a key).

    ``credential_id`` is the authenticator's id in base64url (at most 1023 bytes by the
    WebAuthn spec, so 1364 characters). ``public_key`` (COSE) is not editable: no form
    or admin page offers it. ``sign_count`` is the authenticator's counter as last
    seen; an answer that does not move it forward is refused (a cloned authenticator).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="passkeys"
    )
    name = models.CharField(_("name"), max_length=100)
    credential_id = models.CharField(
        _("credential id"), max_length=1364, unique=True, editable=False
    )
    public_key = models.BinaryField(_("public key"), editable=False)
    sign_count = models.PositiveBigIntegerField(_("sign count"), default=0, editable=False)
    transports = models.JSONField(_("transports"), default=list, blank=True, editable=False)
    aaguid = models.CharField(_("AAGUID"), max_length=36, blank=True, default="", editable=False)
    # The account's handle on the authenticator (base64url, random): an answer naming
    # another handle is refused.
    user_handle = models.CharField(
        _("user handle"), max_length=88, blank=True, default="", editable=False
    )
    backed_up = models.BooleanField(_("synced"), default=False, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True, editable=False)

    class Meta:
        db_table = "passkeys"
        verbose_name = _("passkey")
        verbose_name_plural = _("passkeys")
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return self.name
