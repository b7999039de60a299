"""``oauth_redirect`` / ``oauth_callback`` and the default views of ``appframework.oauth.urls``."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ..auth.sso import finish_sso_login
from ..conf import app_settings
from ..container import container
from .manager import OAuthManager
from .types import OAuthUser

__all__ = [
    "aoauth_callback",
    "aoauth_redirect",
    "callback_view",
    "oauth_callback",
    "oauth_redirect",
    "redirect_view",
]


def _manager() -> OAuthManager:
    if OAuthManager in container:
        manager: OAuthManager = container.resolve(OAuthManager)
        return manager
    return OAuthManager()


def oauth_redirect(request: HttpRequest, provider: str) -> HttpResponseRedirect:
    """A redirect to ``provider``'s login page, with a new one-use state in the session.
    A ``next`` query parameter is kept for after the sign-in (used only if on this site)."""
    return HttpResponseRedirect(
        _manager().redirect_url(request, provider, next=request.GET.get("next"))
    )


def oauth_callback(request: HttpRequest, provider: str) -> OAuthUser:
    """The identity ``provider`` vouches for, from its callback (see ``handle_callback``)."""
    return _manager().handle_callback(request, provider)


aoauth_redirect = sync_to_async(oauth_redirect)
aoauth_callback = sync_to_async(oauth_callback)


@never_cache
@require_GET
def redirect_view(request: HttpRequest, provider: str) -> HttpResponse:
    return oauth_redirect(request, provider)


@never_cache
@require_GET
def callback_view(request: HttpRequest, provider: str) -> HttpResponse:
    """Finds or creates the local user (``OAUTH["USER_HANDLER"]``), then signs them in
    — through the TOTP challenge when they have it on (``OAUTH["MFA"]``) — and redirects
    to the ``next`` given at the start, if it is on this site."""
    oauth_user = oauth_callback(request, provider)
    handler: Any = app_settings.OAUTH.USER_HANDLER
    user = handler(request, oauth_user)
    return finish_sso_login(
        request,
        user,
        getattr(request, "oauth_next", None),
        mfa=bool(app_settings.OAUTH.MFA),
        default_url=app_settings.OAUTH.LOGIN_REDIRECT_URL,
    )
