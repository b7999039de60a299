"""TOTP two-factor authentication: enrollment, recovery codes, and the login challenge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports
from .flows import (
    acomplete_challenge,
    alogin_or_challenge,
    apending_user_id,
    astart_challenge,
    complete_challenge,
    confirm,
    disable,
    enroll,
    login_or_challenge,
    pending_user_id,
    regenerate_recovery_codes,
    require_current_code,
    start_challenge,
    verify_and_consume,
)
from .recovery import generate_recovery_codes
from .totp import generate_secret, provisioning_uri, verify_totp

if TYPE_CHECKING:
    from .models import MfaEnrollable

# Only the model mixin needs the app registry; everything else imports plainly.
__getattr__ = lazy_exports(__name__, {"MfaEnrollable": ".models"})

__all__ = [
    "MfaEnrollable",
    "acomplete_challenge",
    "alogin_or_challenge",
    "apending_user_id",
    "astart_challenge",
    "complete_challenge",
    "confirm",
    "disable",
    "enroll",
    "generate_recovery_codes",
    "generate_secret",
    "login_or_challenge",
    "pending_user_id",
    "provisioning_uri",
    "regenerate_recovery_codes",
    "require_current_code",
    "start_challenge",
    "verify_and_consume",
    "verify_totp",
]
