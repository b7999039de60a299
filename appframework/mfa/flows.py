"""Enrollment and the login challenge (the state table in docs/mfa.md).

enroll → (pending) → confirm → (enabled) → disable. A user with TOTP on is logged in
only through ``start_challenge`` (after the password) then ``complete_challenge`` with
a live code or an unused recovery code.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import router, transaction
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from .. import events
from ..auth.challenge import (
    METHOD_ATTR,
    PENDING_SESSION_KEY,
    alogin_or_challenge,
    apending_user_id,
    astart_challenge,
    end_challenge,
    login_or_challenge,
    pending_challenge,
    pending_uid,
    pending_user_id,
    start_challenge,
)
from ..auth.factor_limit import FactorTry, begin_factor_try
from ..conf import app_settings
from ..exceptions import ValidationException
from .recovery import generate_recovery_codes, hash_recovery_code, recovery_code_matches
from .totp import generate_secret, matching_counter, provisioning_uri

__all__ = [
    "PENDING_SESSION_KEY",
    "account_name",
    "acomplete_challenge",
    "alogin_or_challenge",
    "apending_user_id",
    "astart_challenge",
    "complete_challenge",
    "confirm",
    "consume_factor",
    "default_issuer",
    "disable",
    "enroll",
    "login_or_challenge",
    "pending_user_id",
    "regenerate_recovery_codes",
    "require_current_code",
    "start_challenge",
    "verify_and_consume",
]

VALID_WINDOW = 1


def _has_last_counter(user: Any) -> bool:
    try:
        user._meta.get_field("mfa_last_counter")
    except Exception:
        return False
    return True


def default_issuer() -> str:
    """The issuer authenticator apps show: ``MFA["ISSUER"]``."""
    return str(app_settings.MFA.ISSUER or "appframework")


def account_name(user: Any) -> str:
    """The account name authenticator apps show: the user's login name."""
    getter = getattr(user, "get_username", None)
    return str(getter() if callable(getter) else user.pk)


def _save_mfa(user: Any, last_counter: int | None, **values: Any) -> None:
    """Set the MFA columns in ``values`` (and ``mfa_last_counter`` when the model has it)
    and save only those."""
    if _has_last_counter(user):
        values["mfa_last_counter"] = last_counter
    for name, value in values.items():
        setattr(user, name, value)
    user.save(update_fields=list(values))


# -- enrollment -----------------------------------------------------------------------
def enroll(user: Any, *, issuer: str | None = None) -> dict[str, str]:
    """Store a new pending secret (``mfa_enabled`` stays False; a second call replaces
    it) and return ``{"uri", "secret"}`` for the QR code and manual entry."""
    if getattr(user, "mfa_enabled", False):
        raise ValidationException(_("Two-factor authentication is already on."), code="mfa_enabled")
    secret = generate_secret()
    _save_mfa(user, None, mfa_secret=secret, mfa_recovery_codes=None)
    return {
        "uri": provisioning_uri(secret, account_name(user), issuer or default_issuer()),
        "secret": secret,
    }


def confirm(user: Any, code: Any, request: HttpRequest | None = None) -> list[str]:
    """Turn TOTP on when ``code`` verifies against the pending secret; returns the
    recovery codes in plaintext, the only time they are ever shown (only hashes are
    stored). ``ValidationException`` when nothing is pending or the code is wrong."""
    if getattr(user, "mfa_enabled", False) or not getattr(user, "mfa_secret", None):
        raise ValidationException(
            _("No two-factor enrollment is in progress."), code="mfa_not_pending"
        )
    counter = matching_counter(user.mfa_secret, code, VALID_WINDOW)
    if counter is None:
        raise ValidationException(_("The code is not valid."), code="mfa_invalid_code")
    codes = generate_recovery_codes()
    # The confirming step counts as used: the same code cannot sign in afterwards.
    _save_mfa(
        user,
        counter,
        mfa_enabled=True,
        mfa_recovery_codes=[hash_recovery_code(c) for c in codes],
    )
    _announce(events.totp_enabled, user, request, router.db_for_write(user._meta.model))
    return codes


def disable(user: Any, request: HttpRequest | None = None) -> None:
    """TOTP off: the secret and every recovery code are removed."""
    was_on = bool(getattr(user, "mfa_enabled", False))
    _save_mfa(user, None, mfa_enabled=False, mfa_secret=None, mfa_recovery_codes=None)
    if was_on:
        _announce(events.totp_disabled, user, request, router.db_for_write(user._meta.model))


def regenerate_recovery_codes(user: Any, request: HttpRequest | None = None) -> list[str]:
    """Replace every recovery code with ten new ones and return them in plaintext (the
    only time they are shown). Ask for a current code first (``verify_and_consume``):
    whoever holds only the session must not get a fresh way in.
    ``ValidationException`` when TOTP is off."""
    if not getattr(user, "mfa_enabled", False):
        raise ValidationException(
            _("Two-factor authentication is off for this user."), code="mfa_not_enabled"
        )
    codes = generate_recovery_codes()
    hashed = [hash_recovery_code(c) for c in codes]
    # Only this column: the consumed TOTP step must stay recorded.
    user.mfa_recovery_codes = hashed
    user.save(update_fields=["mfa_recovery_codes"])
    db = router.db_for_write(user._meta.model)
    _announce(events.recovery_codes_generated, user, request, db, count=len(codes))
    return codes


TOTP = "totp"
RECOVERY_CODE = "recovery_code"


def verify_and_consume(user: Any, code: Any, request: HttpRequest | None = None) -> bool:
    """A live TOTP code or an unused recovery code, spent at most once.

    The user row is re-read with ``SELECT ... FOR UPDATE`` inside a transaction: two
    requests spending one recovery code (or one 30-second step) at the same moment are
    serialised, and only the first succeeds (on databases with row locks; SQLite
    serialises whole writes instead). A used recovery code is removed (and
    ``recovery_code_used`` sent once committed); with ``mfa_last_counter`` a consumed
    step, and every earlier one, is refused.
    """
    return consume_factor(user, code, request) is not None


def consume_factor(user: Any, code: Any, request: HttpRequest | None = None) -> str | None:
    """:func:`verify_and_consume` saying which factor the code was: ``"totp"``,
    ``"recovery_code"``, or None when it was neither."""
    # user._meta.model, not type(user): request.user is a lazy wrapper around the user.
    model = user._meta.model
    db = router.db_for_write(model)
    with transaction.atomic(using=db):
        row = model._base_manager.using(db).select_for_update().filter(pk=user.pk).first()
        if row is None or not row.mfa_enabled or not row.mfa_secret:
            return None
        counter = matching_counter(row.mfa_secret, code, VALID_WINDOW)
        if counter is not None:
            if _has_last_counter(row):
                if row.mfa_last_counter is not None and counter <= row.mfa_last_counter:
                    return None
                row.mfa_last_counter = counter
                row.save(update_fields=["mfa_last_counter"])
                user.mfa_last_counter = counter
            return TOTP
        stored = list(row.mfa_recovery_codes or ())
        for index, hashed in enumerate(stored):
            if recovery_code_matches(hashed, code):
                del stored[index]
                row.mfa_recovery_codes = stored
                row.save(update_fields=["mfa_recovery_codes"])
                user.mfa_recovery_codes = stored
                _announce(events.recovery_code_used, row, request, db, remaining=len(stored))
                return RECOVERY_CODE
    return None


def _announce(signal: Any, user: Any, request: HttpRequest | None, db: str, **extra: Any) -> None:
    """Send ``signal`` about ``user`` once the current transaction commits."""
    sender = user._meta.model
    transaction.on_commit(
        lambda: signal.send(sender=sender, user=user, request=request, **extra), using=db
    )


# -- the login challenge --------------------------------------------------------------
def complete_challenge(
    request: HttpRequest,
    code: Any = None,
    *,
    passkey: Any = None,
    rate_limit: bool = True,
    rate_limit_attempts: int | None = None,
    rate_limit_window: float | None = None,
) -> Any | None:
    """Sign the pending user in with a live code or an unused recovery code, or with
    ``passkey`` (the answer of ``navigator.credentials.get()`` to this session's
    ``challenge`` options, ``appframework.passkeys``), and return them; None (pending
    state kept for a retry) for a wrong code or no pending challenge. A refused passkey
    raises ``PasskeyRefused`` (403, its code says why), the pending state kept too.

    Tries are bounded per user (``appframework.auth.factor_limit``): after
    ``rate_limit_attempts`` wrong ones (default ``MFA["FREE_TRIES"]``), each further try
    waits twice as long as the one before, ``rate_limit_window`` seconds first (default
    ``MFA["FIRST_WAIT"]``), at most ``MFA["MAX_WAIT"]``; a try
    before its turn is ``TooManyRequestsException`` (429), even for the right code or
    passkey."""
    from ..auth.sessions import login

    pending = pending_challenge(request)
    if pending is None:
        return None
    user_id = pending_uid(pending)
    attempt = (
        begin_factor_try(user_id, free=rate_limit_attempts, first_wait=rate_limit_window)
        if rate_limit
        else FactorTry(user_id)
    )
    user = get_user_model()._base_manager.filter(pk=user_id).first()
    if user is None or not getattr(user, "is_active", True):
        return None
    # A password changed (or a logout everywhere) since the password step ends it.
    if not constant_time_compare(str(pending.get("hash", "")), user.get_session_auth_hash()):
        end_challenge(request)
        return None
    if passkey is not None:
        from ..passkeys.ceremonies import CHALLENGE, authenticate

        try:
            authenticate(request, passkey, CHALLENGE, user)
        except Exception:
            attempt.failed(request, user)
            raise
        method: str | None = "passkey"
    else:
        method = consume_factor(user, code, request)
    if method is None:
        attempt.failed(request, user)
        events.login_failed.send(
            sender=user._meta.model,
            user=user,
            request=request,
            username=user.get_username(),
            reason="second_factor",
        )
        return None
    end_challenge(request)
    attempt.succeeded()
    setattr(request, METHOD_ATTR, method)
    login(request, user)
    return user


async def acomplete_challenge(
    request: HttpRequest,
    code: Any = None,
    *,
    passkey: Any = None,
    rate_limit: bool = True,
    rate_limit_attempts: int | None = None,
    rate_limit_window: float | None = None,
) -> Any | None:
    """The async twin of :func:`complete_challenge`."""
    return await sync_to_async(complete_challenge)(
        request,
        code,
        passkey=passkey,
        rate_limit=rate_limit,
        rate_limit_attempts=rate_limit_attempts,
        rate_limit_window=rate_limit_window,
    )


def require_current_code(request: HttpRequest | None, user: Any, code: str) -> None:
    """A live TOTP code or an unused recovery code of ``user`` (spent), counted on the
    user's guessing bound; ``ValidationException`` (``mfa_invalid_code``) otherwise. What
    turning TOTP off and new recovery codes ask for, beside a recent authentication: a
    stolen session, or a stolen session and the password, cannot take the factor away."""
    attempt = begin_factor_try(user.pk)
    if consume_factor(user, code, request) is None:
        attempt.failed(request, user)
        raise ValidationException(
            _("Enter a current code (or a recovery code)."), code="mfa_invalid_code"
        )
    attempt.succeeded()
