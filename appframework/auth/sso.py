"""The last step every single sign-on shares (OAuth callback, SAML ACS): a local user
is known, so sign them in, or send them to the TOTP challenge first, then redirect."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ForbiddenException
from ..http import safe_redirect_url

__all__ = [
    "APP_HANDOFF_SESSION_KEY",
    "SSO_SIGN_IN_SESSION_KEY",
    "account_with_email",
    "create_sso_user",
    "finish_sso_login",
    "identity_subject",
    "link_identity",
    "linked_user",
]

#: The last sign-in through an identity provider in this session: ``{"uid", "at"}``
#: (the user and when the provider vouched for them). The app hand-off asks it.
SSO_SIGN_IN_SESSION_KEY = "_appframework_sso_sign_in"
#: An app's single sign-on started in this browser (appframework.headless.handoff): it
#: outlives the sign-in it waits for, which may start this session afresh.
APP_HANDOFF_SESSION_KEY = "_appframework_app_handoff"


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
    from .challenge import NEXT_SESSION_KEY, login_or_challenge
    from .sessions import login

    if user is None or not getattr(user, "is_active", True):
        raise ForbiddenException(_("This account is disabled."), code="account_disabled")
    fallback = resolve_url(default_url or settings.LOGIN_REDIRECT_URL)
    after = safe_redirect_url(request, next_url, fallback)
    # Signing another user in (or starting their challenge) starts the session afresh.
    handoff = request.session.pop(APP_HANDOFF_SESSION_KEY, None)
    signed_in = True
    if not mfa:
        login(request, user)
    else:
        signed_in = login_or_challenge(request, user)
    if handoff is not None:
        request.session[APP_HANDOFF_SESSION_KEY] = handoff
    request.session[SSO_SIGN_IN_SESSION_KEY] = {"uid": str(user.pk), "at": time.time()}
    if not signed_in:
        # The code form continues to the same place once the challenge is passed.
        request.session[NEXT_SESSION_KEY] = after
        return HttpResponseRedirect(
            resolve_url(app_settings.MFA.CHALLENGE_URL or settings.LOGIN_URL)
        )
    return HttpResponseRedirect(after)


def create_sso_user(request: HttpRequest | None, identity: Any, *, verified: bool) -> Any:
    """A new local account for someone an identity provider vouches for (``identity``:
    an ``OAuthUser`` or a ``SamlUser``), made by the adapter (``new_user``,
    ``populate_sso_user``, ``save_user`` with an unusable password: they sign in through
    the provider); its address recorded, confirmed when the provider ``verified`` it;
    ``user_registered`` sent once committed."""
    from django.db import transaction

    from ..events import user_registered
    from .adapter import get_adapter
    from .verification import record_address

    adapter = get_adapter(request)
    user = adapter.new_user(request)
    adapter.populate_sso_user(request, user, identity)
    adapter.save_user(request, user, None)
    record_address(user, identity.email, verified=verified, primary=True)
    model = user._meta.model
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


def link_identity(
    identity_model: Any, user: Any, email: str, *, request: HttpRequest | None = None, **key: Any
) -> Any:
    """Link the identity ``key`` to ``user`` and return the user it ends up linked to: a
    concurrent first sign-in of the same identity may have linked it first.
    ``identity_linked`` is sent once committed."""
    from django.db import IntegrityError, transaction

    from ..events import identity_linked

    try:
        with transaction.atomic():
            identity = identity_model.objects.create(user=user, email=email, **key)
    except IntegrityError:
        return identity_model.objects.select_related("user").get(**key).user
    transaction.on_commit(
        lambda: identity_linked.send(
            sender=user._meta.model,
            user=user,
            request=request,
            provider=identity.provider,
            subject=identity_subject(identity),
        )
    )
    return user


def identity_subject(identity: Any) -> str:
    """The provider's name for the user: OAuth's user id, SAML's NameID."""
    return str(getattr(identity, "provider_user_id", None) or getattr(identity, "name_id", ""))


def account_with_email(email: str) -> Any | None:
    """The local account with this address (case-insensitive), or None."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    lookup = {f"{model.get_email_field_name()}__iexact": email}
    return model._default_manager.filter(**lookup).first()
