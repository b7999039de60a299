"""Where a verified first factor leads: one answer for the pages and the JSON API.

:func:`sign_in` takes a user whose first factor (a password, a mailed code, a confirmed
sign-up) was just proven and returns what happened: ``SIGNED_IN``, ``SECOND_FACTOR``
(the challenge is pending) or ``VERIFY_EMAIL`` (mandatory verification and an
unconfirmed address: a new confirmation was sent, and confirming it in this browser or
app signs in).
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.http import HttpRequest

from ..exceptions import TooManyRequestsException
from .account_marker import account_marker, marks_account
from .challenge import METHOD_ATTR, login_or_challenge
from .verification import email_verified, send_confirmation, user_email, verification_mode

__all__ = [
    "SECOND_FACTOR",
    "SIGNED_IN",
    "SIGNUP_SESSION_KEY",
    "VERIFY_EMAIL",
    "confirming_signs_in",
    "sign_in",
    "sign_in_after_confirmation",
]

SIGNED_IN = "authenticated"
SECOND_FACTOR = "second_factor_required"
VERIFY_EMAIL = "verification_required"

#: The account this browser (or app) just made or tried to sign in to with an
#: unconfirmed address: confirming that address here signs it in.
SIGNUP_SESSION_KEY = "_appframework_signup_user"


def confirming_signs_in(request: HttpRequest, user: Any) -> None:
    """Confirming ``user``'s address in this session will sign them in; ``None``: a
    marker of the same shape that signs nobody in (a sign-up with a taken address)."""
    request.session[SIGNUP_SESSION_KEY] = account_marker(user)


def sign_in(request: HttpRequest, user: Any, method: str) -> str:
    """Sign ``user`` in after their first factor ``method`` ("password",
    "email_code", "email"): one of ``SIGNED_IN``, ``SECOND_FACTOR``, ``VERIFY_EMAIL``."""
    if method != "email" and verification_mode() == "mandatory" and not email_verified(user):
        # Past the mail limit, the confirmations sent lately still work.
        with contextlib.suppress(TooManyRequestsException):
            send_confirmation(request, user, user_email(user))
        confirming_signs_in(request, user)
        return VERIFY_EMAIL
    setattr(request, METHOD_ATTR, method)
    return SIGNED_IN if login_or_challenge(request, user) else SECOND_FACTOR


def sign_in_after_confirmation(request: HttpRequest, user: Any) -> str | None:
    """After ``user``'s address was confirmed: when this session made the account (or
    tried to sign in to it), sign them in — ``SIGNED_IN`` or ``SECOND_FACTOR`` —
    else None (they sign in as usual)."""
    from .sessions import current_user_sync

    if not marks_account(request.session.get(SIGNUP_SESSION_KEY), user):
        return None
    request.session.pop(SIGNUP_SESSION_KEY, None)
    if current_user_sync(request) is not None:
        return SIGNED_IN
    return sign_in(request, user, "email")
