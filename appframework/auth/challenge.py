"""The half-signed-in state between the first factor and the second.

Every way in (the password form, OAuth, SAML, the admin) ends in :func:`login_or_challenge`:
a user without a second factor is signed in; a user with one (TOTP on, or a passkey) is
remembered in the session as *pending* for ``MFA["CHALLENGE_TTL"]`` seconds, and only a
second factor (``appframework.mfa.complete_challenge``) finishes the sign-in. This module
needs neither pyotp nor py_webauthn: projects without two-factor users never load them.
"""

from __future__ import annotations

import time
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ValidationException
from .factors import has_second_factor

__all__ = [
    "METHOD_ATTR",
    "NEXT_SESSION_KEY",
    "PENDING_SESSION_KEY",
    "alogin_or_challenge",
    "apending_user_id",
    "astart_challenge",
    "authentication_method",
    "end_challenge",
    "login_or_challenge",
    "pending_challenge",
    "pending_uid",
    "pending_user_id",
    "start_challenge",
]

PENDING_SESSION_KEY = "_appframework_mfa_pending"
#: Where the code form sends the user once the challenge is passed: the checked ``next``
#: of the sign-in that started it (the login form, single sign-on), kept in the session
#: because the code form is a page of its own.
NEXT_SESSION_KEY = "_appframework_login_next"
#: Request attribute a sign-in sets before ``login()`` to name the factor it proved.
METHOD_ATTR = "_appframework_auth_method"


def authentication_method(request: HttpRequest) -> str:
    """The factor the sign-in under way proved (set by the view before ``login``)."""
    return str(getattr(request, METHOD_ATTR, "password"))


def challenge_session(request: HttpRequest) -> Any:
    """The request's session; the challenge cannot work without one."""
    session = getattr(request, "session", None)
    if session is None:
        raise RuntimeError("The two-factor challenge needs SessionMiddleware.")
    return session


def start_challenge(request: HttpRequest, user: Any) -> None:
    """After a verified first factor, for a user with TOTP on or a passkey: the session
    remembers who is half signed in (for ``MFA["CHALLENGE_TTL"]`` seconds) but
    ``current_user`` stays None."""
    # Sessions import Django's auth models: not before the app registry is ready.
    from .sessions import current_user_sync, logout

    if not has_second_factor(user):
        raise ValidationException(
            _("Two-factor authentication is off for this user."), code="mfa_not_enabled"
        )
    if current_user_sync(request) is not None:
        # Whoever was signed in on this browser is signed out: the session must not
        # keep one user while it waits for another's code.
        logout(request)
    session = challenge_session(request)
    # A new session key: a cookie planted before the password step is not the one
    # that carries the half-signed-in state.
    session.cycle_key()
    session[PENDING_SESSION_KEY] = {
        "uid": str(user.pk),
        "exp": int(time.time()) + int(app_settings.MFA.CHALLENGE_TTL),
        "hash": user.get_session_auth_hash(),
    }


def pending_challenge(request: HttpRequest) -> dict[str, Any] | None:
    """The pending sign-in (``uid``, ``exp``, ``hash``: the user's session hash when the
    first factor was given), or None when nothing is pending or it has expired."""
    session = getattr(request, "session", None)
    pending = session.get(PENDING_SESSION_KEY) if session is not None else None
    if not isinstance(pending, dict) or int(pending.get("exp", 0)) < time.time():
        return None
    return pending


def pending_uid(pending: dict[str, Any]) -> Any:
    """The user id of a pending sign-in, as the user model's primary key type."""
    return get_user_model()._meta.pk.to_python(pending["uid"])


def pending_user_id(request: HttpRequest) -> Any | None:
    """The id of the user whose second factor is awaited, or None."""
    pending = pending_challenge(request)
    return None if pending is None else pending_uid(pending)


def end_challenge(request: HttpRequest) -> None:
    """Forget the pending sign-in (it succeeded, or it can no longer succeed)."""
    session = getattr(request, "session", None)
    if session is not None:
        session.pop(PENDING_SESSION_KEY, None)


def login_or_challenge(request: HttpRequest, user: Any) -> bool:
    """What every way in calls once the first factor is verified: signs the user in and
    returns True, or — for a user with TOTP on or a passkey, unless this browser is
    trusted (``MFA["TRUST_BROWSER"]``) — starts the challenge and returns False (send
    them to the code form)."""
    from .sessions import login
    from .trusted_browsers import is_trusted

    if has_second_factor(user) and not is_trusted(request, user):
        start_challenge(request, user)
        return False
    login(request, user)
    return True


astart_challenge = sync_to_async(start_challenge)
apending_user_id = sync_to_async(pending_user_id)


async def alogin_or_challenge(request: HttpRequest, user: Any) -> bool:
    """The async twin of :func:`login_or_challenge`, for an async login view right after
    ``await AuthManager.attempt(...)``."""
    return await sync_to_async(login_or_challenge)(request, user)
