"""Sign-up: a new account from an address and a password (docs/accounts.md).

With ``AUTH["EMAIL_VERIFICATION"] = "mandatory"`` a sign-up with an address that already
has an account answers exactly as a new one — the same page, after the same work (one
password hash, one mail) — and the owner is mailed that someone tried, so the form tells
nobody who has an account. With ``"optional"`` or ``"none"`` the form says the address
is taken, as most sites do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import events
from ..conf import app_settings
from ..exceptions import ForbiddenException, ValidationException
from .adapter import get_adapter
from .mail_limit import limit_mail
from .passwords import burn_hash_time
from .signin import confirming_signs_in
from .verification import (
    email_owner,
    issue_decoy_confirmation,
    notify_owner,
    record_address,
    send_confirmation,
    verification_mode,
)

__all__ = ["SignupResult", "sign_up"]


@dataclass(frozen=True)
class SignupResult:
    """``user``: the new account (None when the address was taken under mandatory
    verification); ``sign_in``: whether it may sign in now; ``confirmation``: how its
    address is being confirmed (``"link"``, ``"code"`` or None)."""

    user: Any
    sign_in: bool
    confirmation: str | None


def sign_up(request: HttpRequest, data: Mapping[str, Any]) -> SignupResult:
    """Make the account ``data`` (a valid sign-up form's ``cleaned_data``) describes."""
    adapter = get_adapter(request)
    if not adapter.is_open_for_signup(request):
        raise ForbiddenException(_("Sign-up is closed."), code="signup_closed")
    mode = verification_mode()
    email = str(data["email"])
    password = data.get("password") or None
    limit_mail(request, email if mode != "none" else None)
    owner = email_owner(email)
    if owner is not None:
        if mode != "mandatory":
            raise ValidationException(
                _("An account with this address exists already."), code="email_taken"
            )
        # The same work as a new account (a password hash, one mail) and the same
        # session writes (so the same Set-Cookie): nothing in the answer differs.
        burn_hash_time(password or "")
        notify_owner(request, owner)
        # A pending confirmation, as for a new account, that no confirmation can complete.
        confirming_signs_in(request, None)
        issue_decoy_confirmation(request, email)
        return SignupResult(None, sign_in=False, confirmation=_confirmation_kind())
    try:
        with transaction.atomic():
            user = adapter.new_user(request)
            adapter.populate_user(request, user, data)
            adapter.save_user(request, user, password)
            record_address(user, email, verified=False, primary=True)
            # Webhook deliveries leave once this commits (never for a rolled-back sign-up).
            events.user_registered.send(sender=user._meta.model, user=user, request=request)
    except IntegrityError:
        # Another sign-up took the name or the address between the form's check and
        # this insert: nothing was written; the person tries again and gets the form's
        # answer this time.
        raise ValidationException(
            _("An account with these details was made a moment ago. Try again."),
            code="signup_conflict",
        ) from None
    confirmation = None
    if mode != "none":
        confirmation = send_confirmation(request, user, email, counted=True)
    if mode == "mandatory":
        confirming_signs_in(request, user)
    return SignupResult(user, sign_in=mode != "mandatory", confirmation=confirmation)


def _confirmation_kind() -> str:
    return "code" if app_settings.AUTH.EMAIL_VERIFICATION_BY_CODE else "link"
