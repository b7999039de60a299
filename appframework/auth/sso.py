"""The last step every single sign-on shares (OAuth callback, SAML ACS): a local user
is known, so sign them in, or send them to the TOTP challenge first, then redirect."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ForbiddenException
from ..http import safe_redirect_url

__all__ = [
    "account_with_email",
    "create_sso_user",
    "finish_sso_login",
    "link_identity",
    "linked_user",
]


def finish_sso_login(
    request: HttpRequest,
    user: Any,
    next_url: Any,
    *,
    mfa: bool,
    default_url: str | None = None,
) -> HttpResponseRedirect:
    """Sign ``user`` in (``mfa``: through the TOTP challenge when they have it on) and
    redirect to ``next_url`` when it is on this site, else ``default_url``
    (``LOGIN_REDIRECT_URL`` when None). A deactivated account is refused (403)."""
    # Function-level: sessions import Django's auth models, and this module is imported
    # with the OAuth and SAML packages, before the app registry is ready.
    from .challenge import login_or_challenge
    from .sessions import login

    if user is None or not getattr(user, "is_active", True):
        raise ForbiddenException(_("This account is disabled."), code="account_disabled")
    if not mfa:
        login(request, user)
    elif not login_or_challenge(request, user):
        return HttpResponseRedirect(
            resolve_url(app_settings.MFA.CHALLENGE_URL or settings.LOGIN_URL)
        )
    fallback = resolve_url(default_url or settings.LOGIN_REDIRECT_URL)
    return HttpResponseRedirect(safe_redirect_url(request, next_url, fallback))


def create_sso_user(request: HttpRequest | None, email: str, name: str | None) -> Any:
    """A new local account for someone an identity provider vouches for: the email as
    the username, an unusable password (they sign in through the provider), the name
    when the model has a ``name`` column; sends ``user_registered`` once committed."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from ..events import user_registered

    model = get_user_model()
    values: dict[str, Any] = {model.USERNAME_FIELD: email, model.get_email_field_name(): email}
    if name and "name" in {f.name for f in model._meta.get_fields()}:
        values["name"] = name[: model._meta.get_field("name").max_length or 150]
    user = model(**values)
    user.set_unusable_password()
    user.save()
    transaction.on_commit(lambda: user_registered.send(sender=model, user=user, request=request))
    return user


def linked_user(identity_model: Any, email: str | None, **key: Any) -> Any | None:
    """The user an identity (``key``: its provider and subject) is linked to, or None;
    the address the provider asserts now is recorded on the link."""
    identity = identity_model.objects.select_related("user").filter(**key).first()
    if identity is None:
        return None
    identity.email = email or ""
    identity.save(update_fields=["email", "last_login_at"])
    return identity.user


def link_identity(identity_model: Any, user: Any, email: str, **key: Any) -> Any:
    """Link the identity ``key`` to ``user`` and return the user it ends up linked to: a
    concurrent first sign-in of the same identity may have linked it first."""
    from django.db import IntegrityError, transaction

    try:
        with transaction.atomic():
            identity_model.objects.create(user=user, email=email, **key)
    except IntegrityError:
        return identity_model.objects.select_related("user").get(**key).user
    return user


def account_with_email(email: str) -> Any | None:
    """The local account with this address (case-insensitive), or None."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    lookup = {f"{model.get_email_field_name()}__iexact": email}
    return model._default_manager.filter(**lookup).first()
