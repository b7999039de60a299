"""The JSON API for both clients under one include (docs/headless.md)::

    path("api/auth/", include("appframework.headless.urls")),

gives ``api/auth/browser/v1/...`` (cookie sessions, CSRF) and ``api/auth/app/v1/...``
(``X-Session-Token``). URL names: ``headless:browser:<name>`` and ``headless:app:<name>``.
"""

from __future__ import annotations

from typing import Any

from django.urls import include, path

from .base import APP, BROWSER, client_view
from .openapi import OpenAPIView
from .views import account, auth, provider, sessions, tokens

__all__ = ["client_urlpatterns"]

#: (path, view class, name) of every endpoint, the same for both clients.
ENDPOINTS: list[tuple[str, Any, str]] = [
    ("config", auth.ConfigView, "config"),
    ("session", auth.SessionView, "session"),
    ("auth/login", auth.LoginView, "login"),
    ("auth/second-factor", auth.SecondFactorView, "second-factor"),
    ("auth/passkey/options", auth.PasskeyOptionsView, "passkey-options"),
    ("auth/passkey/login", auth.PasskeyLoginView, "passkey-login"),
    ("auth/reauthenticate", auth.ReauthenticateView, "reauthenticate"),
    ("auth/signup", auth.SignupView, "signup"),
    ("auth/email/verify", auth.VerifyEmailView, "verify-email"),
    ("auth/email/resend", auth.ResendEmailView, "resend-email"),
    ("auth/password/reset", auth.PasswordResetView, "password-reset"),
    ("auth/password/reset/confirm", auth.PasswordResetConfirmView, "password-reset-confirm"),
    ("auth/code/request", auth.LoginCodeRequestView, "login-code-request"),
    ("auth/code/confirm", auth.LoginCodeConfirmView, "login-code-confirm"),
    ("auth/provider/token", provider.ProviderTokenView, "provider-token"),
    ("account", account.AccountView, "account"),
    ("account/email", account.EmailChangeView, "email"),
    ("account/password", account.PasswordChangeView, "password"),
    ("account/totp", account.TOTPView, "totp"),
    ("account/recovery-codes", account.RecoveryCodesView, "recovery-codes"),
    ("account/passkeys", account.PasskeysView, "passkeys"),
    ("account/passkeys/<int:pk>", account.PasskeyView, "passkey"),
    ("account/linked-accounts", account.LinkedAccountsView, "linked-accounts"),
    ("account/linked-accounts/<str:kind>/<int:pk>", account.LinkedAccountView, "linked-account"),
    ("account/trusted-browsers", account.TrustedBrowsersView, "trusted-browsers"),
    ("account/trusted-browsers/<int:pk>", account.TrustedBrowserView, "trusted-browser"),
    ("account/sessions", sessions.UserSessionsView, "sessions"),
    ("account/sessions/<int:pk>", sessions.UserSessionView, "user-session"),
    ("account/sessions/end-others", sessions.EndOtherSessionsView, "end-other-sessions"),
    ("account/tokens", tokens.TokensView, "tokens"),
    ("account/tokens/<int:pk>", tokens.TokenView, "token"),
]


def client_urlpatterns(client: str) -> list[Any]:
    return [path(route, client_view(view, client), name=name) for route, view, name in ENDPOINTS]


app_name = "headless"

urlpatterns = [
    path("openapi.json", OpenAPIView.as_view(endpoints=ENDPOINTS), name="openapi"),
    path("browser/v1/", include((client_urlpatterns(BROWSER), BROWSER))),
    path("app/v1/", include((client_urlpatterns(APP), APP))),
    # The two pages an app's single sign-on passes through in a browser (not JSON).
    path(
        "app/v1/auth/provider/redirect",
        provider.provider_redirect_view,
        name="provider-redirect",
    ),
    path(
        "app/v1/auth/provider/complete",
        provider.provider_complete_view,
        name="provider-complete",
    ),
]
