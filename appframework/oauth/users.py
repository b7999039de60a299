"""The default ``OAUTH["USER_HANDLER"]``: find or create the local user for an identity.

1. A linked identity (provider, provider user id) signs in its user.
2. Otherwise an account with the same email address is linked, but only when the
   provider says it verified that address: an unverified address is just a string the
   provider's user typed, and linking on it hands over someone else's account.
3. Otherwise a new account is created (with an unusable password) when the provider
   shares a verified address, or an unverified one with ``ALLOW_UNVERIFIED_EMAIL``.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..auth.address_proof import claim_existing_account
from ..auth.sso import account_with_email, create_sso_user, link_identity, linked_user
from ..conf import app_settings
from ..exceptions import ForbiddenException
from .types import OAuthUser

__all__ = ["find_or_create_user"]


def find_or_create_user(request: HttpRequest | None, oauth_user: OAuthUser) -> Any:
    from .models import OAuthIdentity

    key = {"provider": oauth_user.provider, "provider_user_id": oauth_user.provider_user_id}
    with transaction.atomic():
        linked = linked_user(OAuthIdentity, oauth_user.email, **key)
        if linked is not None:
            return linked
        if not oauth_user.email:
            raise ForbiddenException(
                _(
                    "The sign-in provider did not share an email address, which an account here needs."
                ),
                code="oauth_email_required",
            )
        existing = account_with_email(oauth_user.email)
        if existing is None and not (
            oauth_user.email_verified or app_settings.OAUTH.ALLOW_UNVERIFIED_EMAIL
        ):
            raise ForbiddenException(
                _(
                    "The sign-in provider has not verified your email address; verify it there first."
                ),
                code="oauth_email_unverified",
            )
        if existing is not None and not oauth_user.email_verified:
            raise ForbiddenException(
                _(
                    "An account with this email address exists, and the sign-in provider has "
                    "not verified that the address is yours. Sign in with your password."
                ),
                code="oauth_email_unverified",
            )
        if existing is not None:
            # The provider verified the address: an unconfirmed account with it is its
            # owner's now, whoever made it and whatever password they chose.
            claim_existing_account(request, existing, oauth_user.email)
        user = existing or create_sso_user(
            request, oauth_user, verified=bool(oauth_user.email_verified)
        )
        return link_identity(OAuthIdentity, user, oauth_user.email, request=request, **key)
