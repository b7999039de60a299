"""The account pages under one include (docs/accounts.md)::

    path("accounts/", include("appframework.auth.urls")),

URL names: ``appframework:login``, ``appframework:mfa-challenge``,
``appframework:mfa-setup``, ``appframework:logout``. ``LOGIN_URL = "appframework:login"``
and ``APPFRAMEWORK["MFA"]["CHALLENGE_URL"] = "appframework:mfa-challenge"`` point at them.
"""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "appframework"

urlpatterns = [
    path("login/", views.login_view, name="login"),
    path("login/code/", views.mfa_challenge_view, name="mfa-challenge"),
    path("two-factor/", views.mfa_setup_view, name="mfa-setup"),
    path("logout/", views.logout_view, name="logout"),
]
