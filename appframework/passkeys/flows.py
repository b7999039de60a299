"""Signing in with a passkey alone, and the rules of managing them.

A passwordless sign-in is a discoverable credential with user verification: something
the user has, unlocked by something they know or are. It counts as both factors, so it
signs in directly, without the challenge a password leads to.
"""

from __future__ import annotations

from typing import Any

from django.db import router, transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..auth.adapter import get_adapter
from ..auth.factors import forget_passkeys
from ..conf import app_settings
from ..exceptions import (
    ForbiddenException,
    NotFoundException,
    TooManyRequestsException,
    ValidationException,
)
from .ceremonies import CONFIRM, LOGIN, NAME_MAX_LENGTH, authenticate

__all__ = [
    "is_last_factor",
    "remove_passkey",
    "rename_passkey",
    "sign_in_with_passkey",
]


def _limit_key(request: HttpRequest) -> str:
    return f"passkey-login:{get_adapter(request).get_client_ip(request)}"


def sign_in_with_passkey(request: HttpRequest, data: Any) -> Any:
    """Verify the answer to this session's ``login`` options and sign its owner in
    (user verification required); returns the user. Throttled per client address
    (``PASSKEYS["LOGIN_ATTEMPTS"]`` per ``LOGIN_WINDOW`` seconds, then 429 with
    ``passkey_rate_limited``); a refused answer raises ``PasskeyRefused``."""
    from ..auth.challenge import end_challenge
    from ..auth.sessions import login
    from ..container import container
    from ..ratelimit import RateLimiter

    section = app_settings.PASSKEYS
    window = float(section.LOGIN_WINDOW)
    limiter = container.resolve(RateLimiter) if RateLimiter in container else None
    key = _limit_key(request)
    if limiter is not None:
        result = limiter.hit(key, int(section.LOGIN_ATTEMPTS), window)
        if not result.allowed:
            # Not counted while blocked: the wait runs out however hard someone tries.
            limiter.refund(key, window)
            raise TooManyRequestsException(
                _("Too many passkey sign-ins; try again later."),
                code="passkey_rate_limited",
                retry_after=result.retry_after,
            )
    passkey = authenticate(request, data, LOGIN)
    user = passkey.user
    if not getattr(user, "is_active", True):
        raise ForbiddenException(_("This account is disabled."), code="account_disabled")
    # A half-finished password sign-in in this browser is over: this one is complete.
    end_challenge(request)
    login(request, user)
    if limiter is not None:
        # Sign-ins that succeed do not use up the address's budget (a shared NAT).
        limiter.refund(key, window)
    return user


def _owned(user: Any, passkey_id: Any) -> Any:
    from .models import Passkey

    try:
        passkey = Passkey.objects.filter(user_id=user.pk, pk=int(passkey_id)).first()
    except (TypeError, ValueError):
        passkey = None
    if passkey is None:
        raise NotFoundException(_("No such passkey."), code="passkey_not_found")
    return passkey


def rename_passkey(user: Any, passkey_id: Any, name: Any) -> Any:
    """Rename one of ``user``'s passkeys; 404 for anyone else's, 422 for a blank name."""
    passkey = _owned(user, passkey_id)
    name = str(name or "").strip()
    if not name or len(name) > NAME_MAX_LENGTH:
        raise ValidationException(
            _("A name of 1 to 100 characters, please."), code="passkey_name_invalid"
        )
    passkey.name = name
    passkey.save(update_fields=["name"])
    return passkey


def is_last_factor(user: Any) -> bool:
    """True when removing one passkey would leave ``user`` without a second factor: no
    TOTP, and this is the only passkey."""
    from .models import Passkey

    if getattr(user, "mfa_enabled", False):
        return False
    return Passkey.objects.filter(user_id=user.pk).count() <= 1


def remove_passkey(request: HttpRequest, user: Any, passkey_id: Any, proof: Any = None) -> None:
    """Remove one of ``user``'s passkeys. The last second factor goes only with a
    current factor: ``proof``, the answer of one of the user's passkeys to this
    session's ``confirm`` options (``passkey_last_factor``, 422, without it): whoever
    holds only the session must not be able to turn the second factor off."""
    from .models import Passkey

    passkey = _owned(user, passkey_id)
    db = router.db_for_write(Passkey)
    with transaction.atomic(using=db):
        # The user's passkeys locked: two removals at once cannot both see "not last".
        list(Passkey.objects.using(db).select_for_update().filter(user_id=user.pk))
        if is_last_factor(user):
            if proof in (None, ""):
                raise ValidationException(
                    _("This is your last second factor: confirm with a passkey to remove it."),
                    code="passkey_last_factor",
                )
            authenticate(request, proof, CONFIRM, user)
        passkey.delete()
    forget_passkeys(user)
    from .. import events

    transaction.on_commit(
        lambda: events.passkey_removed.send(
            sender=Passkey, user=user, passkey=passkey, request=request
        ),
        using=db,
    )
