"""The account pages under one include (docs/accounts.md)::

    path("accounts/", include("appframework.auth.urls")),

URL names: ``appframework:login``, ``appframework:mfa-challenge``,
``appframework:mfa-setup``, ``appframework:logout``; with ``appframework.passkeys``
installed also ``appframework:passkeys``, ``appframework:passkey-login`` and
``appframework:passkey-options``. ``LOGIN_URL = "appframework:login"``
and ``APPFRAMEWORK["MFA"]["CHALLENGE_URL"] = "appframework:mfa-challenge"`` point at them.
"""

from __future__ import annotations

from django.apps import apps
from django.urls import path

from . import views

app_name = "appframework"

urlpatterns = [
    path("login/", views.login_view, name="login"),
    path("login/code/", views.mfa_challenge_view, name="mfa-challenge"),
    path("two-factor/", views.mfa_setup_view, name="mfa-setup"),
    path("logout/", views.logout_view, name="logout"),
]

if apps.is_installed("appframework.passkeys"):
    from ..passkeys import views as passkeys

    urlpatterns += [
        path("login/passkey/", passkeys.passkey_login_view, name="passkey-login"),
        path("passkeys/", passkeys.passkeys_view, name="passkeys"),
        path("passkeys/options/", passkeys.passkey_options_view, name="passkey-options"),
    ]
