"""The default ``SAML["USER_HANDLER"]``: find or create the local user for a SAML identity.

1. A linked identity (provider, NameID) signs in its user, whatever email it asserts.
2. Otherwise an account with the asserted email is linked and signed in only when the
   provider has ``trust_email=True``: an IdP you do not run may assert any address (its
   user typed it, or its administrator did), and linking on it hands over the password
   account of whoever owns that address (403 ``saml_email_not_trusted`` instead).
3. Otherwise a new account is created (with an unusable password) and linked.

A transient NameID changes at every sign-in, so it is never linked: with ``trust_email``
the email finds the account each time; without it nothing could recognise the person
at their next sign-in, and the response is refused (403 ``saml_name_id_transient``).
Projects with other rules point ``USER_HANDLER`` at their own function.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from saml2.saml import NAMEID_FORMAT_TRANSIENT

from ..auth.address_proof import claim_existing_account
from ..auth.sso import account_with_email, create_sso_user, link_identity, linked_user
from ..exceptions import ForbiddenException
from .types import SamlProvider, SamlUser

__all__ = ["find_or_create_user"]


def find_or_create_user(
    request: HttpRequest | None, saml_user: SamlUser, provider: SamlProvider
) -> Any:
    from .models import SamlIdentity

    transient = saml_user.name_id_format == NAMEID_FORMAT_TRANSIENT
    key = {"provider": provider.name, "name_id": saml_user.name_id}
    with transaction.atomic():
        if not transient:
            linked = linked_user(SamlIdentity, saml_user.email, **key)
            if linked is not None:
                return linked
        if not saml_user.email:
            raise ForbiddenException(
                _(
                    "The identity provider did not assert an email address, which an account here needs."
                ),
                code="saml_email_required",
            )
        if transient and not provider.trust_email:
            raise ForbiddenException(
                _(
                    "The identity provider names you differently at every sign-in, so this "
                    "site cannot recognise you."
                ),
                code="saml_name_id_transient",
            )
        existing = account_with_email(saml_user.email)
        if existing is not None and not provider.trust_email:
            raise ForbiddenException(
                _(
                    "An account with this email address exists, and this identity provider "
                    "is not trusted to say the address is yours. Sign in with your password."
                ),
                code="saml_email_not_trusted",
            )
        if existing is not None:
            # Trusted for addresses: an unconfirmed account with this one is its owner's.
            claim_existing_account(request, existing, saml_user.email)
        user = existing or create_sso_user(request, saml_user, verified=bool(provider.trust_email))
        if transient:
            return user
        return link_identity(SamlIdentity, user, saml_user.email, request=request, **key)
