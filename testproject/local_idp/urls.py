"""URLs of the local provider: DOT under /o/ (so the issuer is http://HOST:PORT/o), the login page."""

from __future__ import annotations

from django.urls import include, path
from oauth2_provider import urls as oauth2_urls

from testproject.local_idp import saml_views, views

# Only the protocol endpoints: DOT's application and token management pages would let
# anyone who signs in register clients, which a provider for tests has no use for.
oauth2_patterns = (
    oauth2_urls.base_urlpatterns + oauth2_urls.oidc_urlpatterns + oauth2_urls.metadata_urlpatterns,
    oauth2_urls.app_name,
)

urlpatterns = [
    path("o/", include(oauth2_patterns, namespace="oauth2_provider")),
    path("accounts/login/", views.LocalIdpLoginView.as_view(), name="login"),
    path("avatars/<str:username>.svg", views.avatar, name="avatar"),
    path("saml/metadata", saml_views.metadata, name="saml-metadata"),
    path("saml/sso", saml_views.sso, name="saml-sso"),
    path("saml/idp-initiated", saml_views.idp_initiated, name="saml-idp-initiated"),
]
