"""The account pages under one include (docs/accounts.md)::

    path("accounts/", include("appframework.auth.urls")),

URL names (namespace ``appframework``): ``login``, ``mfa-challenge``, ``logout``,
``reauthenticate``, ``signup``, ``verification-sent``, ``email``, ``email-change``,
``email-resend``, ``confirm-email``, ``password-change``, ``password-reset``,
``password-reset-sent``, ``password-reset-key``, ``login-code``, ``login-code-confirm``,
``trusted-browser-forget``, ``sessions``, ``session-end``, ``sessions-end-others``,
``linked-accounts``, ``linked-account-unlink``, ``tokens``, ``token-revoke``; with the
``mfa`` extra ``mfa-setup``, ``totp-activate``,
``totp-deactivate``, ``recovery-codes``; with ``appframework.passkeys`` installed
``passkeys``, ``passkey-add``, ``passkey-rename``, ``passkey-remove``, ``passkey-login``
and ``passkey-options``. ``LOGIN_URL = "appframework:login"`` and
``APPFRAMEWORK["MFA"]["CHALLENGE_URL"] = "appframework:mfa-challenge"`` point at them.
"""

from __future__ import annotations

from django.apps import apps
from django.urls import URLPattern, path

from . import views


def shared_urlpatterns() -> list[URLPattern]:
    """Sign-up, addresses, passwords, sign-in by mail and trusted browsers: the pages
    whose paths are the same wherever the account pages are mounted."""
    return [
        path("signup/", views.SignupView.as_view(), name="signup"),
        path("signup/sent/", views.VerificationSentView.as_view(), name="verification-sent"),
        path("email/", views.EmailView.as_view(), name="email"),
        path("email/change/", views.EmailChangeView.as_view(), name="email-change"),
        path("email/resend/", views.ResendConfirmationView.as_view(), name="email-resend"),
        path("email/confirm/<str:key>/", views.ConfirmEmailView.as_view(), name="confirm-email"),
        path("password/change/", views.PasswordChangeView.as_view(), name="password-change"),
        path("password/reset/", views.PasswordResetView.as_view(), name="password-reset"),
        path(
            "password/reset/sent/",
            views.PasswordResetSentView.as_view(),
            name="password-reset-sent",
        ),
        path(
            "password/reset/<str:uidb64>/<str:token>/",
            views.PasswordResetKeyView.as_view(),
            name="password-reset-key",
        ),
        path("login/email/", views.LoginCodeView.as_view(), name="login-code"),
        path(
            "login/email/code/",
            views.LoginCodeConfirmView.as_view(),
            name="login-code-confirm",
        ),
        path("linked-accounts/", views.LinkedAccountsView.as_view(), name="linked-accounts"),
        path(
            "linked-accounts/<str:kind>/<int:pk>/unlink/",
            views.UnlinkAccountView.as_view(),
            name="linked-account-unlink",
        ),
        path("sessions/", views.SessionsView.as_view(), name="sessions"),
        path("sessions/<int:pk>/end/", views.EndSessionView.as_view(), name="session-end"),
        path(
            "sessions/end-others/",
            views.EndOtherSessionsView.as_view(),
            name="sessions-end-others",
        ),
        path("tokens/", views.AccessTokensView.as_view(), name="tokens"),
        path(
            "tokens/<int:pk>/revoke/",
            views.RevokeAccessTokenView.as_view(),
            name="token-revoke",
        ),
        path(
            "trusted-browsers/<int:pk>/forget/",
            views.ForgetTrustedBrowserView.as_view(),
            name="trusted-browser-forget",
        ),
    ]


def account_urlpatterns() -> list[URLPattern]:
    """The patterns of every account page this installation has."""
    patterns = [
        path("login/", views.login_view, name="login"),
        path("login/code/", views.mfa_challenge_view, name="mfa-challenge"),
        path("logout/", views.logout_view, name="logout"),
        path("reauthenticate/", views.reauthenticate_view, name="reauthenticate"),
        *shared_urlpatterns(),
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
