"""``OAuthIdentity``: which provider account belongs to which local user."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from ..auth.identities import LinkedIdentity

__all__ = ["OAuthIdentity"]


class OAuthIdentity(LinkedIdentity):
    """One provider account linked to one local user, keyed on the provider's stable
    subject id (never on the email address, which a user can change at the provider)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_identities"
    )
    provider_user_id = models.CharField(_("provider user id"), max_length=255)

    class Meta:
        db_table = "oauth_identities"
        verbose_name = _("OAuth identity")
        verbose_name_plural = _("OAuth identities")
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "provider_user_id"], name="oauth_identity_unique_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.provider_user_id}"
