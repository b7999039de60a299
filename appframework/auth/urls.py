"""The account pages under one include (docs/accounts.md)::

    path("accounts/", include("appframework.auth.urls")),

URL names (namespace ``appframework``): ``login``, ``mfa-challenge``, ``logout``,
``reauthenticate``; with the ``mfa`` extra ``mfa-setup``, ``totp-activate``,
``totp-deactivate``, ``recovery-codes``; with ``appframework.passkeys`` installed
``passkeys``, ``passkey-add``, ``passkey-rename``, ``passkey-remove``, ``passkey-login``
and ``passkey-options``. ``LOGIN_URL = "appframework:login"`` and
``APPFRAMEWORK["MFA"]["CHALLENGE_URL"] = "appframework:mfa-challenge"`` point at them.
"""

from __future__ import annotations

from django.apps import apps
from django.urls import URLPattern, path

from . import views


def account_urlpatterns() -> list[URLPattern]:
    """The patterns of every account page this installation has."""
    patterns = [
        path("login/", views.login_view, name="login"),
        path("login/code/", views.mfa_challenge_view, name="mfa-challenge"),
        path("logout/", views.logout_view, name="logout"),
        path("reauthenticate/", views.reauthenticate_view, name="reauthenticate"),
    ]
    try:
        from ..mfa import views as mfa
    except ImportError:  # pyotp or segno (the "mfa" extra) is not installed
        pass
    else:
        patterns += [
            path("two-factor/", mfa.TwoFactorView.as_view(), name="mfa-setup"),
            path("two-factor/totp/on/", mfa.ActivateTOTPView.as_view(), name="totp-activate"),
            path("two-factor/totp/off/", mfa.DeactivateTOTPView.as_view(), name="totp-deactivate"),
            path(
                "two-factor/recovery-codes/",
                mfa.RecoveryCodesView.as_view(),
                name="recovery-codes",
            ),
        ]
    if apps.is_installed("appframework.passkeys"):
        from ..passkeys import views as passkeys

        patterns += [
            path("login/passkey/", passkeys.PasskeyLoginView.as_view(), name="passkey-login"),
            path("passkeys/", passkeys.PasskeysView.as_view(), name="passkeys"),
            path("passkeys/add/", passkeys.AddPasskeyView.as_view(), name="passkey-add"),
            path(
                "passkeys/<int:pk>/rename/",
                passkeys.RenamePasskeyView.as_view(),
                name="passkey-rename",
            ),
            path(
                "passkeys/<int:pk>/remove/",
                passkeys.RemovePasskeyView.as_view(),
                name="passkey-remove",
            ),
            path("passkeys/options/", passkeys.passkey_options_view, name="passkey-options"),
        ]
    return patterns


app_name = "appframework"

urlpatterns = account_urlpatterns()
