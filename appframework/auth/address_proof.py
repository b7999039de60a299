"""An unconfirmed account's address proven by a way its password had no part in.

Anyone can sign up with someone else's address and a password of their own, or have an
identity provider nobody trusts assert that address, and wait: the account stays
unconfirmed until its owner turns up. When the address is then proven by a way that does
not use that password — a mailed sign-in code, a password reset link, a provider that
verified the address, an identity provider trusted for addresses — whoever proves it is
the address's owner, and nothing set up before the proof may keep working: the
password, every session, app session and API token, the personal access tokens, the
trusted browsers, TOTP, the passkeys and every single sign-on identity linked so far.

Confirming through the link or code mailed at sign-up is the sign-up being finished,
not such a proof: it keeps what the account has.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.db import transaction
from django.http import HttpRequest

from .. import events
from .access_tokens import revoke_access_tokens
from .factors import forget_passkeys
from .linked_accounts import remove_linked_accounts
from .trusted_browsers import forget_browsers
from .user_sessions import forget_sessions
from .verification import email_verified, normalize_email, record_address

__all__ = ["claim_existing_account", "take_back_unconfirmed_account"]


def take_back_unconfirmed_account(request: HttpRequest | None, user: Any) -> bool:
    """Before marking ``user``'s address confirmed by a proof that did not use their
    password: when the address was unconfirmed, end everything made before the proof
    (see the module's text) and return True; a confirmed account is left alone (False)."""
    if email_verified(user):
        return False
    with transaction.atomic():
        if user.has_usable_password():
            # Changing the password column also changes the session hash: every cookie
            # and app session signed in with it stops working.
            user.set_unusable_password()
            user.save()
        if getattr(user, "session_version_field_name", lambda: None)() is not None:
            user.invalidate_sessions()  # signed API tokens too
        revoke_access_tokens(user, request=request)
        forget_browsers(user)
        forget_sessions(user)
        remove_linked_accounts(user)
        _remove_second_factors(user, request)
    events.account_taken_back.send(sender=user._meta.model, user=user, request=request)
    return True


def claim_existing_account(request: HttpRequest | None, user: Any, email: str) -> None:
    """A provider trusted for it vouches for ``email``, the address of the existing
    ``user``: the address counts as confirmed, and on an account nobody had confirmed,
    whatever was set up before ends (it may be a squatter's)."""
    take_back_unconfirmed_account(request, user)
    record_address(user, normalize_email(email), verified=True, primary=True)


def _remove_second_factors(user: Any, request: HttpRequest | None) -> None:
    if apps.is_installed("appframework.passkeys"):
        from ..passkeys.models import Passkey

        Passkey.objects.filter(user_id=user.pk).delete()
        forget_passkeys(user)
    if getattr(user, "mfa_enabled", False) or getattr(user, "mfa_secret", None):
        # pyotp is imported only where a user has TOTP: projects without it never load it.
        from ..mfa.flows import disable

        disable(user, request)
