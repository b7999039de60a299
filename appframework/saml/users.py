"""The default ``SAML["USER_HANDLER"]``: the local account with the asserted email.

An identity provider configured for this site is its users' authority: the email it
asserts, under a signature only its key can make, selects the account, which is
created on first sign-in. Projects that trust an IdP for some accounts only (another
organisation's IdP, say) point ``USER_HANDLER`` at their own function.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..auth.sso import create_sso_user
from ..exceptions import ForbiddenException
from .types import SamlProvider, SamlUser

__all__ = ["find_or_create_user"]


def find_or_create_user(
    request: HttpRequest | None, saml_user: SamlUser, provider: SamlProvider
) -> Any:
    if not saml_user.email:
        raise ForbiddenException(
            _(
                "The identity provider did not assert an email address, which an account here needs."
            ),
            code="saml_email_required",
        )
    model = get_user_model()
    with transaction.atomic():
        existing = model._default_manager.filter(
            **{f"{model.get_email_field_name()}__iexact": saml_user.email}
        ).first()
        return existing or create_sso_user(request, saml_user.email, saml_user.name)
