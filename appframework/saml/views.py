"""Default views of ``appframework.saml.urls``: login, ACS, metadata."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from ..auth.sso import finish_sso_login
from ..conf import app_settings
from .flows import provider_named, saml_acs_redirect, saml_acs_resume, saml_login, saml_metadata

__all__ = ["acs_view", "login_view", "metadata_view"]


@never_cache
@require_GET
def login_view(request: HttpRequest, provider: str) -> HttpResponse:
    return saml_login(request, provider)


@never_cache
@require_http_methods(["GET", "POST"])
def acs_view(request: HttpRequest, provider: str) -> HttpResponse:
    """The IdP's POST is validated (``saml_acs_redirect``) and answered 303 to this URL
    with ``?resume=<key>``. That GET (``saml_acs_resume``) checks the login was started
    in this browser, finds or creates the local user (``SAML["USER_HANDLER"]``), signs
    them in — through the TOTP challenge when they have it on (``SAML["MFA"]``) — and
    redirects to the ``next`` given at login, or for an IdP-initiated login to the
    ``RelayState``, when either is on this site.

    The POST is not CSRF-checked by a token: the IdP's form cannot carry one. Exempt it
    with ``AUTH["CSRF_EXEMPT"] = "appframework.saml.is_saml_acs_request"``. The
    login-CSRF guard is the request id, bound to the browser's session at the resume
    GET (the POST itself arrives without the SameSite=Lax session cookie). IdP-initiated
    responses cannot be bound; the provider may refuse them (``allow_idp_initiated``).
    """
    found = provider_named(provider)
    if request.method == "POST":
        return saml_acs_redirect(request, found)
    if "resume" not in request.GET:
        # A bare GET is no part of the protocol: the same 405 as before the resume step.
        return HttpResponseNotAllowed(["POST"])
    saml_user = saml_acs_resume(request, found)
    handler: Any = app_settings.SAML.USER_HANDLER
    user = handler(request, saml_user, found)
    next_url = getattr(request, "saml_next", None) or getattr(request, "saml_relay_state", None)
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
