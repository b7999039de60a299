"""The account pages (docs/accounts.md): class-based views over the suite's flows, each
with a form a project may swap (``AUTH["FORMS"]``) and a template it may override by
name; ``appframework.auth.urls`` mounts them. The ``*_view`` names are the views ready
for a URLconf (``LoginView.as_view()``), for projects that list them one by one."""

from __future__ import annotations

from .base import (
    AccountPage,
    ExtraContext,
    SignedInMixin,
    SignedInPage,
    extra_context_of,
    login_page_url,
)
from .email import EmailChangeView, EmailView
from .identities import LinkedAccountsView, UnlinkAccountView
from .login import (
    CHALLENGE_TEMPLATE,
    LOGIN_TEMPLATE,
    NEXT_SESSION_KEY,
    ChallengeForm,
    ChallengeView,
    LoginView,
    LogoutView,
    ReauthenticateView,
    challenge_factors,
    passkey_urls,
)
from .login_code import LoginCodeConfirmView, LoginCodeView
from .password import (
    PasswordChangeView,
    PasswordResetKeyView,
    PasswordResetSentView,
    PasswordResetView,
)
from .sessions import EndOtherSessionsView, EndSessionView, SessionsView
from .signup import ConfirmEmailView, ResendConfirmationView, SignupView, VerificationSentView
from .tokens import AccessTokensView, RevokeAccessTokenView
from .trusted import ForgetTrustedBrowserView

__all__ = [
    "CHALLENGE_TEMPLATE",
    "LOGIN_TEMPLATE",
    "NEXT_SESSION_KEY",
    "AccessTokensView",
    "AccountPage",
    "ChallengeForm",
    "ChallengeView",
    "ConfirmEmailView",
    "EmailChangeView",
    "EmailView",
    "EndOtherSessionsView",
    "EndSessionView",
    "ExtraContext",
    "ForgetTrustedBrowserView",
    "LinkedAccountsView",
    "LoginCodeConfirmView",
    "LoginCodeView",
    "LoginView",
    "LogoutView",
    "PasswordChangeView",
    "PasswordResetKeyView",
    "PasswordResetSentView",
    "PasswordResetView",
    "ReauthenticateView",
    "ResendConfirmationView",
    "RevokeAccessTokenView",
    "SessionsView",
    "SignedInMixin",
    "SignedInPage",
    "SignupView",
    "UnlinkAccountView",
    "VerificationSentView",
    "challenge_factors",
    "extra_context_of",
    "login_page_url",
    "login_view",
    "logout_view",
    "mfa_challenge_view",
    "passkey_urls",
    "reauthenticate_view",
]

login_view = LoginView.as_view()
mfa_challenge_view = ChallengeView.as_view()
logout_view = LogoutView.as_view()
reauthenticate_view = ReauthenticateView.as_view()
