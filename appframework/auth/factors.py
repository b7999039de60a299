"""Which users answer the sign-in challenge: the one answer every way in asks."""

from __future__ import annotations

from typing import Any

from django.apps import apps

__all__ = ["has_passkeys", "has_second_factor"]


def has_passkeys(user: Any) -> bool:
    """Whether ``user`` has a passkey registered (False without ``appframework.passkeys``)."""
    if user is None or getattr(user, "pk", None) is None:
        return False
    if not apps.is_installed("appframework.passkeys"):
        return False
    from ..passkeys.models import Passkey

    return Passkey.objects.filter(user_id=user.pk).exists()


def has_second_factor(user: Any) -> bool:
    """TOTP on, or a passkey: such a user is signed in only through the challenge after
    a password, OAuth or SAML (a passkey sign-in counts as both factors itself)."""
    return bool(getattr(user, "mfa_enabled", False)) or has_passkeys(user)
