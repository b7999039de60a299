"""What OAuth and SAML identity links share: the provider, the address it last
asserted, and when the link was made and last used."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ["LinkedIdentity"]


class LinkedIdentity(models.Model):
    """Abstract: a concrete link adds ``user`` (its own ``related_name``) and the
    provider's subject (OAuth's user id, SAML's NameID), unique per provider."""

    provider = models.CharField(_("provider"), max_length=50)
    email = models.CharField(_("email at the provider"), max_length=254, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
