"""``path("", include("appframework.saml.urls"))`` serves ``/saml/<provider>/login``,
``/saml/<provider>/acs`` (register it at the IdP) and ``/saml/<provider>/metadata``."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "appframework_saml"

urlpatterns = [
    path("saml/<str:provider>/login", views.login_view, name="login"),
    path("saml/<str:provider>/acs", views.acs_view, name="acs"),
    path("saml/<str:provider>/metadata", views.metadata_view, name="metadata"),
]
