"""Security notifications: a mail to the user when a factor or the password changes, a
personal access token is made, or someone seems to be guessing the second factor (an email change always tells the old
address: :mod:`appframework.auth.verification`).

The signals of :mod:`appframework.events` are sent either way; with
``AUTH["SECURITY_NOTIFICATIONS"]`` on, these receivers (connected by the
AuthServiceProvider) also send ``appframework/email/<event>_subject.txt`` and
``_message.txt`` through the adapter's ``send_mail``, so a project restyles or
translates them by overriding the templates.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from .. import events
from ..conf import app_settings

__all__ = ["NOTIFIED", "connect_notifications", "send_security_mail"]

#: Signal → mail template prefix (under ``appframework/email/``).
NOTIFIED = {
    events.password_changed: "password_changed",
    events.password_reset: "password_reset",
    events.totp_enabled: "totp_enabled",
    events.totp_disabled: "totp_disabled",
    events.recovery_codes_generated: "recovery_codes_generated",
    events.recovery_code_used: "recovery_code_used",
    events.passkey_added: "passkey_added",
    events.passkey_removed: "passkey_removed",
    events.second_factor_guessed: "second_factor_guessed",
    events.identity_linked: "identity_linked",
    events.identity_unlinked: "identity_unlinked",
    events.access_token_created: "access_token_created",
}


def _address(user: Any) -> str | None:
    address = getattr(user, user.get_email_field_name(), None)
    return address if isinstance(address, str) and "@" in address else None


def _notify(prefix: str, user: Any, request: Any, email: str | None, **extra: Any) -> None:
    if app_settings.AUTH.SECURITY_NOTIFICATIONS:
        send_security_mail(prefix, user, request, email, **extra)


def send_security_mail(
    prefix: str, user: Any, request: Any, email: str | None, **extra: Any
) -> None:
    """Mail ``appframework/email/<prefix>_*`` to ``email`` (nothing when None), with
    when, from which client address and browser, whatever the setting says: for the
    notices a flow always sends (an email change tells the old address)."""
    from .adapter import get_adapter

    if email is None:
        return
    adapter = get_adapter(request)
    context = {
        "user": user,
        "when": timezone.now(),
        "client_ip": adapter.get_client_ip(request) if request is not None else None,
        "user_agent": request.headers.get("User-Agent", "") if request is not None else "",
        **extra,
    }
    adapter.send_mail(f"appframework/email/{prefix}", email, context)


def _receiver(prefix: str) -> Any:
    def notify(sender: Any, user: Any, request: Any = None, **kwargs: Any) -> None:
        _notify(prefix, user, request, _address(user), **kwargs)

    notify.__name__ = f"notify_{prefix}"
    return notify


def connect_notifications() -> None:
    """Connect the receivers (idempotent: each has a dispatch uid)."""
    for signal, prefix in NOTIFIED.items():
        signal.connect(_receiver(prefix), weak=False, dispatch_uid=f"appframework.notify.{prefix}")
