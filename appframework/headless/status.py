"""The session's status: who is signed in, what is pending, and what they have. Every
flow of the JSON API answers with it, so a client always knows its next step."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest

from ..auth.challenge import pending_challenge, pending_uid
from ..auth.factors import has_passkeys
from ..auth.reauth import recently_authenticated
from ..auth.sessions import current_user_sync
from ..auth.signin import SECOND_FACTOR, SIGNED_IN, SIGNUP_SESSION_KEY, VERIFY_EMAIL
from ..auth.verification import email_verified, user_email
from .middleware import is_app_request

__all__ = ["ANONYMOUS", "session_status", "user_payload"]

ANONYMOUS = "anonymous"


def _factors(user: Any) -> dict[str, Any]:
    totp = bool(getattr(user, "mfa_enabled", False))
    return {
        "totp": totp,
        "recovery_codes_left": len(getattr(user, "mfa_recovery_codes", None) or ()) if totp else 0,
        "passkeys": has_passkeys(user),
    }


def user_payload(user: Any) -> dict[str, Any]:
    """What the API says about a user: never the password or a secret."""
    return {
        "id": str(user.pk),
        "username": user.get_username(),
        "email": user_email(user),
        "email_verified": email_verified(user),
        "has_usable_password": user.has_usable_password(),
        "factors": _factors(user),
    }


def _second_factor(request: HttpRequest, pending: dict[str, Any]) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    user = get_user_model()._base_manager.filter(pk=pending_uid(pending)).first()
    factors = []
    if user is not None and getattr(user, "mfa_enabled", False):
        factors += ["totp", "recovery_code"]
    if has_passkeys(user):
        factors.append("passkey")
    return {
        "factors": factors,
        "expires_at": datetime.fromtimestamp(int(pending["exp"]), UTC).isoformat(),
    }


def session_status(request: HttpRequest) -> dict[str, Any]:
    """``status`` (``anonymous``, ``authenticated``, ``second_factor_required``,
    ``verification_required``), ``user``, ``second_factor`` (the factors the pending
    user may answer with), ``recently_authenticated``; for an app, its
    ``session_token``."""
    user = current_user_sync(request)
    pending = None if user is not None else pending_challenge(request)
    session = request.session
    if user is not None:
        status = SIGNED_IN
    elif pending is not None:
        status = SECOND_FACTOR
    elif session.get(SIGNUP_SESSION_KEY):
        status = VERIFY_EMAIL
    else:
        status = ANONYMOUS
    data: dict[str, Any] = {
        "status": status,
        "user": None if user is None else user_payload(user),
        "second_factor": None if pending is None else _second_factor(request, pending),
        "recently_authenticated": user is not None and recently_authenticated(request),
    }
    if is_app_request(request):
        data["session_token"] = session.session_key if not session.is_empty() else None
    return data
