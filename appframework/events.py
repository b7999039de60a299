"""Account events the suite sends as Django signals; listeners connect with ``.connect``.

Every signal is sent with ``sender`` (the user model, or the passkey model for passkey
signals), ``user`` and ``request`` (None outside a request), plus the arguments listed;
docs/accounts.md has them in one table. Those that change an account are sent once the
change is committed. With ``AUTH["SECURITY_NOTIFICATIONS"]`` on, the factor, password and
email signals also mail the user (``appframework.auth.notifications``); with
``appframework_webhooks`` installed, ``user_registered`` fires the webhook event
``user.registered`` and ``passkey_added`` fires ``user.passkey_added``.

``UserRegistered`` and ``PasskeyAdded`` are the same signals under their event names.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = [
    "PasskeyAdded",
    "UserRegistered",
    "access_token_created",
    "access_token_revoked",
    "account_taken_back",
    "email_changed",
    "email_confirmed",
    "identity_linked",
    "identity_unlinked",
    "login_failed",
    "passkey_added",
    "passkey_removed",
    "passkey_used",
    "password_changed",
    "password_reset",
    "reauthenticated",
    "recovery_code_used",
    "recovery_codes_generated",
    "second_factor_guessed",
    "session_ended",
    "totp_disabled",
    "totp_enabled",
    "user_registered",
]

#: An account was created (sign-up, or a first single sign-on).
user_registered = Signal()
UserRegistered = user_registered
#: ``email``: an address was confirmed (a link or a code).
email_confirmed = Signal()
#: ``old_email``, ``new_email``: the account's address changed (the new one confirmed).
email_changed = Signal()
#: The password was changed by its owner (other sessions and tokens have ended).
password_changed = Signal()
#: The password was set through a reset link (every session and token has ended).
password_reset = Signal()
#: TOTP was turned on (``recovery_codes`` were made with it: their number only).
totp_enabled = Signal()
#: TOTP was turned off.
totp_disabled = Signal()
#: ``count``: new recovery codes replaced the old ones.
recovery_codes_generated = Signal()
#: ``remaining``: a recovery code was spent (signing in or re-authenticating).
recovery_code_used = Signal()
#: ``passkey``: a passkey was registered.
passkey_added = Signal()
PasskeyAdded = passkey_added
#: ``passkey``: a passkey was removed (its row already gone: ``passkey.pk`` is None).
passkey_removed = Signal()
#: ``passkey``: a passkey signed in, answered the second step or re-authenticated.
passkey_used = Signal()
#: ``method``: this session proved a factor again ("password", "totp",
#: "recovery_code", "passkey").
reauthenticated = Signal()
#: ``username``, ``reason`` ("password", "second_factor"): a sign-in was refused.
login_failed = Signal()
#: The free tries of a user's second factor were used up with wrong answers: someone who
#: knows the password may be guessing (``failures``).
second_factor_guessed = Signal()
#: ``session`` (its row, already deleted), ``kind`` ("browser", "app"): the user ended
#: one of their sessions from the sessions page or the JSON API.
session_ended = Signal()
#: ``provider``, ``subject``: an OAuth or SAML identity was linked to the account.
identity_linked = Signal()
#: ``provider``, ``subject``: such an identity was unlinked.
identity_unlinked = Signal()
#: ``token``: a personal access token was made (``token.prefix`` names it; the secret
#: itself is never sent).
access_token_created = Signal()
#: ``token``: a personal access token was revoked (by its owner, or by a password reset).
access_token_revoked = Signal()
#: An unconfirmed account's address was proven by a way its password had no part in
#: (a mailed sign-in code, a reset link, a verified provider): its password, sessions,
#: tokens, second factors and linked identities made before were ended.
account_taken_back = Signal()
