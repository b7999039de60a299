"""Changing and resetting the password (docs/accounts.md).

A change (by the signed-in owner, after a recent proof) keeps this session and ends every
other session and API token; a reset (through a mailed link) ends them all, this
browser's included, and forgets the trusted browsers. Both send their signal, and mail
the owner with ``AUTH["SECURITY_NOTIFICATIONS"]``.

Reset links use Django's ``PasswordResetTokenGenerator`` (``PASSWORD_RESET_TIMEOUT``),
keyed here on the suite's password column and session version, so a link dies with the
first password set through it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from .. import events
from .mail_limit import limit_mail
from .verification import normalize_email, record_address, user_by_pk, user_email

__all__ = [
    "ResetTokenGenerator",
    "change_password",
    "request_password_reset",
    "reset_link_user",
    "reset_password",
    "reset_token_generator",
]


class ResetTokenGenerator(PasswordResetTokenGenerator):
    """Django's reset tokens over what changes when a password is set here: the
    password column (``password_hash`` or ``password``) and the session version."""

    key_salt = "appframework.auth.password_flows.ResetTokenGenerator"

    def _make_hash_value(self, user: Any, timestamp: int) -> str:
        password = user.get_password_hash() if hasattr(user, "get_password_hash") else user.password
        version = user.get_session_version() if hasattr(user, "get_session_version") else 0
        login = (
            "" if user.last_login is None else user.last_login.replace(microsecond=0, tzinfo=None)
        )
        return f"{user.pk}{password}{version}{login}{timestamp}{user_email(user)}"


reset_token_generator = ResetTokenGenerator()


def change_password(request: HttpRequest, user: Any, password: str) -> None:
    """Set ``password``; every other session and token of the user ends, this one
    stays signed in."""
    user.set_password(password)
    user.save()
    update_session_auth_hash(request, user)
    events.password_changed.send(sender=user._meta.model, user=user, request=request)


def request_password_reset(request: HttpRequest, email: str) -> None:
    """Mail a reset link to the active account with ``email``, if there is one; the
    answer is the same either way (and the mail limits count it either way)."""
    from .adapter import get_adapter

    limit_mail(request, email)
    model = get_user_model()
    lookup = {f"{model.get_email_field_name()}__iexact": email.strip(), "is_active": True}
    user = model._default_manager.filter(**lookup).first()
    if user is None:
        return
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = reset_token_generator.make_token(user)
    path = reverse("appframework:password-reset-key", args=[uid, token])
    # The parts too: a single-page app's own link (docs/headless.md) is built from them.
    context = {"user": user, "uid": uid, "token": token, "url": request.build_absolute_uri(path)}
    get_adapter(request).send_mail(
        "appframework/email/password_reset_key", user_email(user), context
    )


def reset_link_user(uidb64: str, token: str) -> Any | None:
    """The user a reset link is for, when its token is still good."""
    try:
        pk = force_str(urlsafe_base64_decode(uidb64))
    except (TypeError, ValueError, OverflowError, UnicodeDecodeError):
        return None
    user = user_by_pk(pk)
    if user is None or not user.is_active or not reset_token_generator.check_token(user, token):
        return None
    return user


def reset_password(request: HttpRequest, user: Any, password: str) -> None:
    """Set ``password`` from a reset link: every session and token of the user ends
    (personal access tokens included: a reset is how an account is taken back), its
    trusted browsers are forgotten; the address the link reached counts as confirmed."""
    from .access_tokens import revoke_access_tokens
    from .address_proof import take_back_unconfirmed_account
    from .models import TrustedBrowser

    with transaction.atomic():
        # The link proved the address: on an unconfirmed account, the identities, second
        # factors and sessions anyone set up before end with the old password.
        take_back_unconfirmed_account(request, user)
        user.set_password(password)
        user.save()
        TrustedBrowser.objects.filter(user=user).delete()
        revoke_access_tokens(user, request=request)
        address = user_email(user)
        if address:
            record_address(user, normalize_email(address), verified=True, primary=True)
    events.password_reset.send(sender=user._meta.model, user=user, request=request)
