"""``path("", include("appframework.oauth.urls"))`` serves ``/auth/<provider>/redirect``
and ``/auth/<provider>/callback`` (register the latter at the provider)."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "appframework_oauth"

urlpatterns = [
    path("auth/<str:provider>/redirect", views.redirect_view, name="redirect"),
    path("auth/<str:provider>/callback", views.callback_view, name="callback"),
]
