"""The Django admin signing in through the suite's password + TOTP flow.

One line in ``INSTALLED_APPS``, in place of ``"django.contrib.admin"``::

    "appframework.admin.AdminConfig",

``admin.site`` (and ``@admin.register``) is then an :class:`AdminSite`: ``/admin/login/``
checks the password through the throttled ``AuthManager``, sends a user with TOTP on to
an admin-styled code form (``/admin/login/code/``) and only then into the admin. A
project with its own ``AdminSite`` subclass adds :class:`TotpAdminSiteMixin` first in
its bases.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig as DjangoAdminConfig
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path, reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from .security.csrf import csrf_protect_login

__all__ = ["ADMIN_NEXT_SESSION_KEY", "AdminConfig", "AdminSite", "TotpAdminSiteMixin"]

#: Where the admin's code form goes once the challenge is passed (a checked ``next``).
ADMIN_NEXT_SESSION_KEY = "_appframework_admin_next"

_ALLOWED = require_http_methods(["GET", "HEAD", "POST"])


class TotpAdminSiteMixin:
    """``login`` through password + TOTP, in the admin's own look.

    The password form is the admin's ``admin/login.html``; the code form is
    ``appframework/admin/mfa_challenge.html``, which extends it. Past the login throttle
    or the code limit the answer is a 429, never the misleading "Please enter the
    correct username and password".
    """

    mfa_challenge_template: str | None = None

    # Typed loosely: the mixin relies on AdminSite's attributes (name, each_context...).
    name: str
    login_template: str | None

    def get_urls(self) -> list[URLPattern | URLResolver]:
        # First: before the admin's catch-all app_label pattern.
        urls: list[URLPattern | URLResolver] = [
            path("login/code/", self.mfa_challenge, name="mfa_challenge"),
        ]
        return urls + super().get_urls()  # type: ignore[misc]

    def _context(self, request: HttpRequest, title: str) -> dict[str, Any]:
        return {
            **self.each_context(request),  # type: ignore[attr-defined]
            "title": title,
            "subtitle": None,
            "app_path": request.get_full_path(),
            "username": request.user.get_username(),
        }

    def _after_login(self, request: HttpRequest, next_url: Any) -> str:
        from .http import safe_redirect_url

        return safe_redirect_url(request, next_url, reverse("admin:index", current_app=self.name))

    @method_decorator(never_cache)
    @method_decorator(_ALLOWED)
    @login_not_required
    @csrf_protect_login
    def login(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        from .auth.admin_forms import AdminLoginForm
        from .auth.challenge import login_or_challenge
        from .errors import response_for_error
        from .exceptions import TooManyRequestsException

        if request.method == "GET" and self.has_permission(request):  # type: ignore[attr-defined]
            return HttpResponseRedirect(reverse("admin:index", current_app=self.name))
        next_url = request.POST.get("next") or request.GET.get("next")
        form = AdminLoginForm(request, data=request.POST if request.method == "POST" else None)
        if request.method == "POST":
            try:
                valid = form.is_valid()
            except TooManyRequestsException as exc:
                return response_for_error(request, exc)
            if valid:
                after = self._after_login(request, next_url)
                if login_or_challenge(request, form.user):
                    return HttpResponseRedirect(after)
                request.session[ADMIN_NEXT_SESSION_KEY] = after
                return HttpResponseRedirect(reverse("admin:mfa_challenge", current_app=self.name))
        context = self._context(request, _("Log in"))
        context["form"] = form
        context["next"] = next_url or reverse("admin:index", current_app=self.name)
        context.update(extra_context or {})
        request.current_app = self.name
        return TemplateResponse(request, self.login_template or "admin/login.html", context)

    @method_decorator(never_cache)
    @method_decorator(_ALLOWED)
    @login_not_required
    @csrf_protect_login
    def mfa_challenge(self, request: HttpRequest) -> HttpResponse:
        """The code form after the admin's password form; a wrong code keeps the pending
        sign-in, past five tries a minute 429."""
        from .auth.admin_forms import AdminCodeForm
        from .auth.challenge import pending_user_id
        from .auth.views import challenge_factors
        from .errors import response_for_error
        from .exceptions import AppFrameworkError, TooManyRequestsException
        from .http import wants_json
        from .mfa.flows import complete_challenge

        pending = pending_user_id(request)
        if pending is None:
            return HttpResponseRedirect(reverse("admin:login", current_app=self.name))
        credential = request.POST.get("credential") if request.method == "POST" else None
        refused = None
        form = AdminCodeForm(
            data=request.POST if request.method == "POST" and not credential else None
        )
        if credential or (request.method == "POST" and form.is_valid()):
            # Read before complete_challenge: signing in cycles the session.
            after = request.session.get(ADMIN_NEXT_SESSION_KEY)
            try:
                if credential:
                    user = complete_challenge(request, passkey=credential)
                else:
                    user = complete_challenge(request, form.cleaned_data["code"])
            except TooManyRequestsException as exc:
                return response_for_error(request, exc)
            except AppFrameworkError as exc:  # a refused passkey: its reason, the form again
                if wants_json(request):
                    return response_for_error(request, exc)
                user, refused = None, str(exc.detail)
            else:
                if user is None and not credential:
                    form.add_error(None, _("That code is not valid."))
            if user is not None:
                request.session.pop(ADMIN_NEXT_SESSION_KEY, None)
                return HttpResponseRedirect(self._after_login(request, after))
        context = self._context(request, _("Two-factor code"))
        context["form"] = form
        context["error"] = refused
        context.update(challenge_factors(pending))
        request.current_app = self.name
        return TemplateResponse(
            request,
            self.mfa_challenge_template or "appframework/admin/mfa_challenge.html",
            context,
        )


class AdminSite(TotpAdminSiteMixin, admin.AdminSite):
    """Django's ``AdminSite`` with the password + TOTP sign-in."""


class AdminConfig(DjangoAdminConfig):
    """``"appframework.admin.AdminConfig"`` in ``INSTALLED_APPS`` instead of
    ``"django.contrib.admin"``: the default site becomes :class:`AdminSite`."""

    default_site = "appframework.admin.AdminSite"
