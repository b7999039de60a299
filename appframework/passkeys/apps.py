from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class PasskeysServiceProvider(AppConfig):
    """Passkeys (WebAuthn): a second factor beside TOTP, and passwordless sign-in.
    Parameters live in ``APPFRAMEWORK["PASSKEYS"]`` (docs/passkeys.md). Needs the
    session machinery (``appframework_passkeys.E001``) and the ``passkeys`` extra."""

    name = "appframework.passkeys"
    label = "appframework_passkeys"
    verbose_name = "appframework: passkeys"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks as passkey_checks

        checks.register(passkey_checks.check_sessions)
        checks.register(passkey_checks.check_settings)
        checks.register(passkey_checks.check_relying_party)
        checks.register(passkey_checks.check_rp_id_set, checks.Tags.security, deploy=True)
