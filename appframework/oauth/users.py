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

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..auth.sso import create_sso_user
from ..conf import app_settings
from ..exceptions import ForbiddenException
from .types import OAuthUser

__all__ = ["find_or_create_user"]


def find_or_create_user(request: HttpRequest | None, oauth_user: OAuthUser) -> Any:
    from .models import OAuthIdentity

    model = get_user_model()
    with transaction.atomic():
        identity = (
            OAuthIdentity.objects.select_related("user")
            .filter(provider=oauth_user.provider, provider_user_id=oauth_user.provider_user_id)
            .first()
        )
        if identity is not None:
            identity.email = oauth_user.email or ""
            identity.save(update_fields=["email", "last_login_at"])
            return identity.user
        if not oauth_user.email:
            raise ForbiddenException(
                _(
                    "The sign-in provider did not share an email address, which an account here needs."
                ),
                code="oauth_email_required",
            )
        email_field = model.get_email_field_name()
        existing = model._default_manager.filter(
            **{f"{email_field}__iexact": oauth_user.email}
        ).first()
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
        user = existing or create_sso_user(request, oauth_user.email, oauth_user.name)
        try:
            with transaction.atomic():
                OAuthIdentity.objects.create(
                    user=user,
                    provider=oauth_user.provider,
                    provider_user_id=oauth_user.provider_user_id,
                    email=oauth_user.email,
                )
        except IntegrityError:
            # A concurrent first sign-in of the same identity linked it first.
            identity = OAuthIdentity.objects.select_related("user").get(
                provider=oauth_user.provider, provider_user_id=oauth_user.provider_user_id
            )
            return identity.user
        return user
