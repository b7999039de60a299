"""Signing in with a code mailed to the account's address (``AUTH["LOGIN_BY_CODE"]``).

The visitor gives an address; an active account with it is mailed a code, and the page
asks for it either way (nothing tells whether the address has an account). The code is
good for ``AUTH["EMAIL_CODE_TTL"]`` seconds in this browser, for three tries; it proves
the address (confirmed from then on) and is the first factor only: a user with a second
factor still goes through the challenge.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import ValidationException
from .account_marker import account_marker, marks_account
from .mail_codes import check_code, issue_code, pending_code
from .mail_limit import limit_mail
from .verification import normalize_email, record_address, user_email

__all__ = ["LOGIN_CODE_SESSION_KEY", "code_pending", "request_login_code", "user_for_login_code"]

LOGIN_CODE_SESSION_KEY = "_appframework_login_code"


def request_login_code(request: HttpRequest, email: str) -> None:
    """Mail a sign-in code to the active account with ``email``, if there is one; this
    session waits for a code either way."""
    from .adapter import get_adapter

    limit_mail(request, email)
    user = _active_account(email)
    ttl = int(app_settings.AUTH.EMAIL_CODE_TTL)
    # The session is readable by its holder (signed cookies): a mark of the account,
    # never its id, so an unknown address leaves the same trace as a known one.
    code = issue_code(
        request, LOGIN_CODE_SESSION_KEY, ttl, user=account_marker(user), email=email.strip()
    )
    if user is not None:
        context = {"user": user, "code": code, "minutes": max(1, ttl // 60)}
        get_adapter(request).send_mail("appframework/email/login_code", user_email(user), context)


def _active_account(email: object) -> Any | None:
    if not isinstance(email, str) or not email.strip():
        return None
    model = get_user_model()
    lookup = {f"{model.get_email_field_name()}__iexact": email.strip(), "is_active": True}
    return model._default_manager.filter(**lookup).first()


def code_pending(request: HttpRequest) -> bool:
    """Whether this session waits for a sign-in code."""
    return pending_code(request, LOGIN_CODE_SESSION_KEY) is not None


def user_for_login_code(request: HttpRequest, code: str) -> Any:
    """The account this session's code signs in, when ``code`` is it (its address then
    counts as confirmed); ``ValidationException`` (``login_code_invalid``) otherwise."""
    record = check_code(request, LOGIN_CODE_SESSION_KEY, code)
    user = None if record is None else _active_account(record.get("email"))
    if user is None or record is None or not marks_account(record.get("user"), user):
        raise ValidationException(
            _("That code is not valid or has expired."), code="login_code_invalid"
        )
    address = user_email(user)
    if address:
        # The code proves the address without the password: an unconfirmed account is
        # its owner's now, and what anyone set up before ends.
        from .address_proof import take_back_unconfirmed_account

        take_back_unconfirmed_account(request, user)
        record_address(user, normalize_email(address), verified=True, primary=True)
    return user
