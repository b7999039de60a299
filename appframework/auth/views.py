"""The account pages: log in, the TOTP code form, two-factor setup, log out.

Mounted with ``path("accounts/", include("appframework.auth.urls"))`` (URL names
``appframework:login``, ``appframework:mfa-challenge``, ``appframework:mfa-setup``,
``appframework:logout``; docs/accounts.md). Each page renders a plain template under
``appframework/`` that a project template of the same name replaces; they all extend
``appframework/base.html``.

Every view that signs in or out is ``csrf_protect_login``: another site must not be able
to sign the visitor in to its own account (login CSRF) or out of theirs. Refused
attempts past a limit (password throttle, code limits) answer a 429 in the suite's error
format, here rather than through ErrorMiddleware, so the pages never fail without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import NoReverseMatch, reverse
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from ..container import container
from ..errors import response_for_error
from ..exceptions import (
    AppFrameworkError,
    TooManyRequestsException,
    UnauthorizedException,
    ValidationException,
)
from ..http import safe_redirect_url, wants_json
from ..security.csrf import csrf_protect_login
from .challenge import login_or_challenge, pending_user_id
from .manager import AuthManager
from .sessions import current_user_sync, logout

__all__ = [
    "CHALLENGE_TEMPLATE",
    "LOGIN_TEMPLATE",
    "NEXT_SESSION_KEY",
    "SETUP_TEMPLATE",
    "challenge_factors",
    "extra_context_of",
    "login_view",
    "logout_view",
    "mfa_challenge_view",
    "mfa_setup_view",
    "passkey_urls",
    "qr_code_svg",
    "username_field",
]

LOGIN_TEMPLATE = "appframework/login.html"
CHALLENGE_TEMPLATE = "appframework/mfa_challenge.html"
SETUP_TEMPLATE = "appframework/mfa_setup.html"

#: Where the code form sends the user once the challenge is passed: the login's checked
#: ``next``, kept in the session because the code form is a page of its own.
NEXT_SESSION_KEY = "_appframework_login_next"

ExtraContext = Mapping[str, Any] | Callable[[HttpRequest], Mapping[str, Any]] | None


def username_field() -> tuple[str, str, str]:
    """(field name, label, input type) of the user model's ``USERNAME_FIELD``: the login
    form asks for what the model signs in with, "Email" for an email model."""
    model = get_user_model()
    name = model.USERNAME_FIELD
    field = model._meta.get_field(name)
    label = capfirst(str(getattr(field, "verbose_name", name)))
    kind = "email" if field.get_internal_type() == "EmailField" or name == "email" else "text"
    return name, label, kind


def extra_context_of(request: HttpRequest, extra_context: ExtraContext) -> Mapping[str, Any]:
    if extra_context is None:
        return {}
    return extra_context(request) if callable(extra_context) else extra_context


def _default_after_login() -> str:
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def _login_url() -> str:
    return reverse("appframework:login")


def passkey_urls() -> dict[str, str] | None:
    """The passkey endpoints the account pages' script calls (``options``, ``login``),
    or None when ``appframework.passkeys`` is not installed or its URLs not mounted."""
    if not apps.is_installed("appframework.passkeys"):
        return None
    try:
        return {
            "options": reverse("appframework:passkey-options"),
            "login": reverse("appframework:passkey-login"),
        }
    except NoReverseMatch:
        return None


@csrf_protect_login
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def login_view(
    request: HttpRequest,
    *,
    template_name: str = LOGIN_TEMPLATE,
    extra_context: ExtraContext = None,
) -> HttpResponse:
    """The password form; users with TOTP on continue to the code form.

    Wrong passwords are throttled per account and client address (``request=``); past
    the limit the answer is a 429 with ``Retry-After``, even for the right password.
    Only a same-site ``next`` is followed, after the code form too.
    """
    name, label, kind = username_field()
    error = None
    username = ""
    next_url = request.POST.get("next") or request.GET.get("next", "")
    if request.method == "POST":
        username = request.POST.get(name, "")
        try:
            user = container.resolve(AuthManager).attempt_sync(
                username, request.POST.get("password", ""), request=request
            )
        except TooManyRequestsException as exc:
            return response_for_error(request, exc)
        if user is not None:
            after = safe_redirect_url(request, next_url, _default_after_login())
            if login_or_challenge(request, user):
                return HttpResponseRedirect(after)
            # After start_challenge: it cycles the session key, the value stays.
            request.session[NEXT_SESSION_KEY] = after
            # The code form mounted with this page (MFA["CHALLENGE_URL"] is where single
            # sign-on sends users; pointing it at this same name keeps one code form).
            return HttpResponseRedirect(reverse("appframework:mfa-challenge"))
        error = _("Wrong %(username)s or password.") % {"username": label.lower()}
    context = {
        **extra_context_of(request, extra_context),
        "error": error,
        "username_field": name,
        "username_label": label,
        "username_type": kind,
        # The typed name comes back (autoescaped); the password never does.
        "username": username,
        "next": next_url,
        "passkey": passkey_urls(),
    }
    return render(request, template_name, context, status=401 if error else 200)


@csrf_protect_login
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def mfa_challenge_view(
    request: HttpRequest,
    *,
    template_name: str = CHALLENGE_TEMPLATE,
    extra_context: ExtraContext = None,
) -> HttpResponse:
    """Step two of signing in: a passkey (offered first, when the user has one), the
    authenticator code or a recovery code. A wrong code keeps the pending sign-in for a
    retry (401), as does a refused passkey (its status and code; problem+json for API
    clients); past five tries a minute, 429."""
    from ..mfa.flows import complete_challenge

    pending = pending_user_id(request)
    if pending is None:
        return HttpResponseRedirect(_login_url())
    error = None
    status = 200
    if request.method == "POST":
        # Read before complete_challenge: signing in cycles the session.
        after = request.session.get(NEXT_SESSION_KEY)
        credential = request.POST.get("credential") or None
        try:
            user = complete_challenge(request, request.POST.get("code", ""), passkey=credential)
        except TooManyRequestsException as exc:
            return response_for_error(request, exc)
        except AppFrameworkError as exc:
            if wants_json(request):
                return response_for_error(request, exc)
            user, error, status = None, str(exc.detail), exc.status_code
        if user is not None:
            request.session.pop(NEXT_SESSION_KEY, None)
            return HttpResponseRedirect(safe_redirect_url(request, after, _default_after_login()))
        if error is None:
            error, status = _("That code is not valid."), 401
    context = {**extra_context_of(request, extra_context), "error": error, **challenge_factors(pending)}
    return render(request, template_name, context, status=status)


def challenge_factors(user_id: Any) -> dict[str, Any]:
    """What the challenge page offers the pending user: ``passkey`` (the endpoints, when
    they have a passkey) and ``totp`` (TOTP on: the code form; recovery codes too)."""
    from .factors import has_passkeys

    user = get_user_model()._base_manager.filter(pk=user_id).first()
    urls = passkey_urls() if has_passkeys(user) else None
    return {"passkey": urls, "totp": bool(getattr(user, "mfa_enabled", False))}


def qr_code_svg(uri: str) -> str:
    """The otpauth URI as an inline SVG QR code: no image URL, so the secret never
    reaches a server log or a cache."""
    import segno

    svg: str = segno.make(uri, error="m").svg_inline(scale=4, dark="#000", light="#fff")
    return svg


def _require_current_code(user: Any, code: str) -> None:
    from ..mfa.flows import verify_and_consume
    from .factor_limit import begin_factor_try

    attempt = begin_factor_try(user.pk)
    if not verify_and_consume(user, code):
        attempt.failed(user=user)
        raise ValidationException(
            _("Enter a current code (or a recovery code)."), code="mfa_invalid_code"
        )
    attempt.succeeded()


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def mfa_setup_view(
    request: HttpRequest,
    *,
    template_name: str = SETUP_TEMPLATE,
    extra_context: ExtraContext = None,
) -> HttpResponse:
    """Turn TOTP on (QR code and secret, then a code to confirm, then the recovery codes,
    shown once), get new recovery codes, or turn it off; the last two need a current
    code. POSTs carry ``action``: ``enroll``, ``confirm``, ``regenerate``, ``disable``."""
    from ..mfa.flows import confirm, disable, enroll, regenerate_recovery_codes

    user = current_user_sync(request)
    if user is None:
        # A browser is sent to the form and back; an API client gets the suite's 401.
        if wants_json(request):
            return response_for_error(request, UnauthorizedException())
        return redirect_to_login(request.get_full_path(), _login_url())
    # Every key the template reads is always present: a missing one makes Django log
    # the whole context at DEBUG, which would put the secret and the codes in the log.
    context: dict[str, Any] = {
        **extra_context_of(request, extra_context),
        "me": user,
        "error": None,
        "message": None,
        "secret": None,
        "qr_svg": None,
        "recovery_codes": None,
    }
    action = request.POST.get("action") if request.method == "POST" else None
    code = request.POST.get("code", "")
    try:
        if action == "enroll":
            enrolled = enroll(user)
            context.update(secret=enrolled["secret"], qr_svg=qr_code_svg(enrolled["uri"]))
        elif action == "confirm":
            context["recovery_codes"] = confirm(user, code)
        elif action == "regenerate":
            _require_current_code(user, code)
            context["recovery_codes"] = regenerate_recovery_codes(user)
        elif action == "disable":
            _require_current_code(user, code)
            disable(user)
            context["message"] = _("Two-factor authentication is off.")
        elif action is not None:
            raise ValidationException(_("Unknown action."), code="invalid_action")
    except TooManyRequestsException as exc:
        return response_for_error(request, exc)
    except ValidationException as exc:
        context["error"] = str(exc.detail)
    return render(request, template_name, context, status=422 if context["error"] else 200)


@csrf_protect_login
@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    """POST only, and checked like the login form whatever the request carries: ending
    the browser's session is the browser's business. ``everywhere=1`` ends every session
    of the user."""
    logout(request, everywhere=request.POST.get("everywhere") == "1")
    # Django's LOGOUT_REDIRECT_URL; unset, the login page: a project need not have a "/".
    fallback = resolve_url(settings.LOGOUT_REDIRECT_URL or settings.LOGIN_URL)
    return HttpResponseRedirect(safe_redirect_url(request, request.POST.get("next"), fallback))
