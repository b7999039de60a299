"""Which users answer the sign-in challenge: the one answer every way in asks."""

from __future__ import annotations

from typing import Any

from django.apps import apps

__all__ = ["forget_passkeys", "has_passkeys", "has_second_factor"]


# The answer is kept on the user object for the rest of its request, as Django's
# ModelBackend keeps a user's permissions: a sign-in and the status the JSON API answers
# with it ask the database once. Adding or removing a passkey forgets it.
_PASSKEYS_ATTR = "_appframework_has_passkeys"


def has_passkeys(user: Any) -> bool:
    """Whether ``user`` has a passkey registered (False without ``appframework.passkeys``)."""
    if user is None or getattr(user, "pk", None) is None:
        return False
    known = getattr(user, _PASSKEYS_ATTR, None)
    if known is not None:
        return bool(known)
    if not apps.is_installed("appframework.passkeys"):
        return False
    from ..passkeys.models import Passkey

    found = Passkey.objects.filter(user_id=user.pk).exists()
    setattr(user, _PASSKEYS_ATTR, found)
    return found


def forget_passkeys(user: Any) -> None:
    """Forget what :func:`has_passkeys` keeps on ``user``: a passkey was added or removed."""
    if user is not None:
        setattr(user, _PASSKEYS_ATTR, None)


def has_second_factor(user: Any) -> bool:
    """TOTP on, or a passkey: such a user is signed in only through the challenge after
    a password, OAuth or SAML (a passkey sign-in counts as both factors itself)."""
    return bool(getattr(user, "mfa_enabled", False)) or has_passkeys(user)
