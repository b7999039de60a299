"""``SamlIdentity``: which identity at which SAML provider belongs to which local user."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from ..auth.identities import LinkedIdentity

__all__ = ["SamlIdentity"]


class SamlIdentity(LinkedIdentity):
    """One NameID at one provider (``SamlProvider.name``) linked to one local user, at its
    first sign-in. The NameID is the key, never the email address: an IdP account's
    address can change, and an IdP may assert an address nobody verified."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saml_identities"
    )
    # flows.MAX_NAME_ID: longer NameIDs are refused before they get here.
    name_id = models.CharField(_("NameID"), max_length=512)

    class Meta:
        db_table = "saml_identities"
        verbose_name = _("SAML identity")
        verbose_name_plural = _("SAML identities")
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "name_id"], name="saml_identity_unique_name_id"
            )
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.name_id}"
