"""Default views of ``appframework.saml.urls``: login, ACS, metadata."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from ..auth.sso import finish_sso_login
from ..conf import app_settings
from .flows import provider_named, saml_acs, saml_login, saml_metadata

__all__ = ["acs_view", "login_view", "metadata_view"]


@never_cache
@require_GET
def login_view(request: HttpRequest, provider: str) -> HttpResponse:
    return saml_login(request, provider)


@never_cache
@require_POST
def acs_view(request: HttpRequest, provider: str) -> HttpResponse:
    """Validates the response (``saml_acs``), finds or creates the local user
    (``SAML["USER_HANDLER"]``), signs them in — through the TOTP challenge when they
    have it on (``SAML["MFA"]``) — and redirects to the ``next`` given at login, or for
    an IdP-initiated login to the ``RelayState``, when either is on this site.

    Not CSRF-checked by a token: the IdP's form cannot carry one. The login-CSRF guard
    is the request id: a response must answer an AuthnRequest this site made (or be
    IdP-initiated, which the provider may refuse with ``allow_idp_initiated=False``).
    Exempt it with ``AUTH["CSRF_EXEMPT"] = "appframework.saml.is_saml_acs_request"``.
    """
    found = provider_named(provider)
    saml_user = saml_acs(request, found)
    handler: Any = app_settings.SAML.USER_HANDLER
    user = handler(request, saml_user, found)
    next_url = getattr(request, "saml_next", None) or request.POST.get("RelayState")
    return finish_sso_login(
        request,
        user,
        next_url,
        mfa=bool(app_settings.SAML.MFA),
        default_url=app_settings.SAML.LOGIN_REDIRECT_URL,
    )


@require_GET
def metadata_view(request: HttpRequest, provider: str) -> HttpResponse:
    return saml_metadata(request, provider)
