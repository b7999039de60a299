"""Passkeys (WebAuthn): a phishing-proof second factor beside TOTP, and passwordless
sign-in, through the same challenge every way in uses (docs/passkeys.md). Needs the
``passkeys`` extra (Duo's ``webauthn``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .apps import PasskeysServiceProvider
    from .ceremonies import (
        PasskeyRefused,
        RelyingParty,
        authenticate,
        authentication_options,
        read_assertion,
        register,
        registration_options,
        relying_party,
        verify_assertion,
    )
    from .flows import is_last_factor, remove_passkey, rename_passkey, sign_in_with_passkey
    from .models import Passkey

# Lazily: the model needs the app registry, and the ceremonies the "passkeys" extra.
__getattr__ = lazy_exports(
    __name__,
    {
        "Passkey": ".models",
        "PasskeyRefused": ".ceremonies",
        "PasskeysServiceProvider": ".apps",
        "RelyingParty": ".ceremonies",
        "authenticate": ".ceremonies",
        "authentication_options": ".ceremonies",
        "is_last_factor": ".flows",
        "read_assertion": ".ceremonies",
        "register": ".ceremonies",
        "registration_options": ".ceremonies",
        "relying_party": ".ceremonies",
        "remove_passkey": ".flows",
        "rename_passkey": ".flows",
        "sign_in_with_passkey": ".flows",
        "verify_assertion": ".ceremonies",
    },
)

__all__ = [
    "Passkey",
    "PasskeyRefused",
    "PasskeysServiceProvider",
    "RelyingParty",
    "authenticate",
    "authentication_options",
    "is_last_factor",
    "read_assertion",
    "register",
    "registration_options",
    "relying_party",
    "remove_passkey",
    "rename_passkey",
    "sign_in_with_passkey",
    "verify_assertion",
]
