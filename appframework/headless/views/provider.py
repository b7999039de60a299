"""Single sign-on for apps (:mod:`appframework.headless.handoff`): the two pages the
browser passes through, and the exchange of the code for an app session."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from django.apps import apps
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from ...auth.challenge import METHOD_ATTR
from ...auth.reauth import AUTHENTICATED_AT_SESSION_KEY
from ...auth.sessions import current_user_sync, login, logout
from ...errors import response_for_error
from ...exceptions import AppFrameworkError, BadRequestException
from ..base import HeadlessView
from ..handoff import finish_url, mint_code, pending_handoff, redeem_code, remember

__all__ = ["ProviderTokenView", "provider_complete_view", "provider_redirect_view"]

#: kind → (app, URL name of the view that starts a sign-in at a provider).
_STARTS = {
    "oauth": ("appframework.oauth", "appframework_oauth:redirect"),
    "saml": ("appframework.saml", "appframework_saml:login"),
}


class AppRedirect(HttpResponseRedirect):
    """A redirect to the app's own URI scheme (``com.example.app:/done``), which
    Django's redirects refuse unless told."""

    def __init__(self, url: str) -> None:
        self.allowed_schemes = [urlsplit(url).scheme]
        super().__init__(url)


def _start_url(kind: Any, provider: Any) -> str:
    app, name = _STARTS.get(str(kind), (None, None))
    if app is None or name is None or not apps.is_installed(app) or not isinstance(provider, str):
        raise BadRequestException(_("Unknown sign-in provider."), code="unknown_provider")
    try:
        return reverse(name, args=[provider])
    except NoReverseMatch:
        raise BadRequestException(_("Unknown sign-in provider."), code="unknown_provider") from None


@never_cache
@require_GET
@login_not_required
def provider_redirect_view(request: HttpRequest) -> HttpResponse:
    """Step 1 (in a browser): remember the app's challenge, state and redirect URI, then
    go to the provider; it comes back to :func:`provider_complete_view`. Whoever is
    signed in on this browser stays so: only a provider sign-in completes the hand-off."""
    query = request.GET
    try:
        start = _start_url(query.get("kind", "oauth"), query.get("provider"))
        remember(
            request,
            query.get("code_challenge"),
            query.get("redirect_uri"),
            query.get("state"),
            signed_in=current_user_sync(request) is not None,
        )
    except AppFrameworkError as exc:
        return response_for_error(request, exc)
    complete = reverse("headless:provider-complete")
    return HttpResponseRedirect(f"{start}?{urlencode({'next': complete})}")


@never_cache
@require_http_methods(["GET", "POST"])
@login_not_required
def provider_complete_view(request: HttpRequest) -> HttpResponse:
    """Step 3 (in the browser, signed in by the provider in this hand-off and, with
    one, the second factor). GET asks the person to continue: a navigation alone — a
    cross-site one included — hands out nothing and signs nobody out. The POST from
    that page (CSRF-checked) hands the app a one-use code and ends the browser session
    the hand-off made."""
    user = current_user_sync(request)
    try:
        if request.method == "GET":
            pending_handoff(request, user)
            return render(request, "appframework/app_handoff.html", {"user": user})
        code, redirect_uri, pending = mint_code(request, user)
    except AppFrameworkError as exc:
        return response_for_error(request, exc)
    if not pending.get("signed_in"):
        logout(request)
    return AppRedirect(finish_url(redirect_uri, code, str(pending["state"])))


class ProviderTokenView(HeadlessView):
    """Step 4: POST ``code`` and ``code_verifier``: this session is signed in as the
    user the provider vouched for, its proof of recent authentication dated from that
    provider sign-in. A wrong verifier, a spent or expired code: 400 ``invalid_grant``
    (the code is spent either way)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        data = self.body()
        user, vouched_at = redeem_code(data.get("code"), data.get("code_verifier"))
        setattr(request, METHOD_ATTR, "sso")
        login(request, user)
        # The proof is the provider sign-in's, never younger than it.
        request.session[AUTHENTICATED_AT_SESSION_KEY] = {"at": int(vouched_at), "method": "sso"}
        return self.status()
