"""The passkey pages and endpoints, mounted with the account pages
(``appframework.auth.urls``; URL names ``appframework:passkeys``,
``appframework:passkey-options``, ``appframework:passkey-login``).

The browser side is ``appframework/passkeys.js`` (static, no CDN): it asks
``passkey-options`` for a ceremony's options, runs ``navigator.credentials``, and posts
the answer as the form field ``credential`` with the form's CSRF token. The second
factor is answered on the challenge page itself (``mfa_challenge_view``). Sync views, as
the other account pages; they work under ASGI too.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from ..auth.challenge import pending_user_id
from ..auth.sessions import current_user_sync
from ..auth.views import ExtraContext, extra_context_of
from ..errors import response_for_error
from ..exceptions import (
    AppFrameworkError,
    ForbiddenException,
    TooManyRequestsException,
    UnauthorizedException,
    ValidationException,
)
from ..http import safe_redirect_url, wants_json
from ..security.csrf import csrf_protect_login
from .ceremonies import (
    CHALLENGE,
    CONFIRM,
    LOGIN,
    REGISTER,
    authentication_options,
    register,
    registration_options,
)
from .flows import is_last_factor, remove_passkey, rename_passkey, sign_in_with_passkey

__all__ = [
    "PASSKEYS_TEMPLATE",
    "passkey_login_view",
    "passkey_options_view",
    "passkeys_view",
]

PASSKEYS_TEMPLATE = "appframework/passkeys.html"


def _pending_user(request: HttpRequest) -> Any:
    user_id = pending_user_id(request)
    if user_id is None:
        raise ForbiddenException(
            _("No sign-in is waiting for its second factor; sign in again."),
            code="mfa_not_pending",
        )
    return get_user_model()._base_manager.filter(pk=user_id).first()


def _signed_in(request: HttpRequest) -> Any:
    user = current_user_sync(request)
    if user is None:
        raise UnauthorizedException()
    return user


@csrf_protect_login
@never_cache
@require_POST
def passkey_options_view(request: HttpRequest) -> HttpResponse:
    """``{"publicKey": options}`` for the ceremony ``kind`` (POST field): ``login``
    (anyone: passwordless), ``challenge`` (the user whose second factor is awaited),
    ``register`` and ``confirm`` (the signed-in user). The challenge is kept in this
    session; checked for CSRF like the login form, since it writes an anonymous session."""
    kind = request.POST.get("kind", "")
    try:
        if kind == LOGIN:
            options = authentication_options(request, LOGIN)
        elif kind == CHALLENGE:
            options = authentication_options(request, CHALLENGE, _pending_user(request))
        elif kind == CONFIRM:
            options = authentication_options(request, CONFIRM, _signed_in(request))
        elif kind == REGISTER:
            options = registration_options(request, _signed_in(request))
        else:
            raise ValidationException(_("Unknown passkey ceremony."), code="invalid_action")
    except AppFrameworkError as exc:
        return response_for_error(request, exc)
    return JsonResponse({"publicKey": options})


@csrf_protect_login
@never_cache
@require_POST
def passkey_login_view(request: HttpRequest) -> HttpResponse:
    """Passwordless sign-in: the answer to this session's ``login`` options (form field
    ``credential``) signs its owner in, then a same-site ``next`` (else
    ``LOGIN_REDIRECT_URL``). Refusals in the suite's error format: problem+json for API
    clients, the small error page for browsers."""
    try:
        sign_in_with_passkey(request, request.POST.get("credential", ""))
    except AppFrameworkError as exc:
        return response_for_error(request, exc)
    fallback = resolve_url(settings.LOGIN_REDIRECT_URL)
    return HttpResponseRedirect(safe_redirect_url(request, request.POST.get("next"), fallback))


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def passkeys_view(
    request: HttpRequest,
    *,
    template_name: str = PASSKEYS_TEMPLATE,
    extra_context: ExtraContext = None,
) -> HttpResponse:
    """The signed-in user's passkeys, with when each was created and last used. POSTs
    carry ``action``: ``add`` (``credential``, ``name``), ``rename`` (``id``, ``name``),
    ``remove`` (``id``; the last second factor also needs ``credential``, an answer to
    ``confirm`` options)."""
    from .models import Passkey

    user = current_user_sync(request)
    if user is None:
        if wants_json(request):
            return response_for_error(request, UnauthorizedException())
        return redirect_to_login(request.get_full_path(), reverse("appframework:login"))
    error = message = None
    status = 200
    action = request.POST.get("action") if request.method == "POST" else None
    try:
        if action == "add":
            passkey = register(
                request, user, request.POST.get("credential", ""), request.POST.get("name", "")
            )
            message = _("Passkey “%(name)s” added.") % {"name": passkey.name}
        elif action == "rename":
            rename_passkey(user, request.POST.get("id"), request.POST.get("name"))
            message = _("Passkey renamed.")
        elif action == "remove":
            remove_passkey(request, user, request.POST.get("id"), request.POST.get("credential"))
            message = _("Passkey removed.")
        elif action is not None:
            raise ValidationException(_("Unknown action."), code="invalid_action")
    except TooManyRequestsException as exc:
        return response_for_error(request, exc)
    except AppFrameworkError as exc:
        if wants_json(request):
            return response_for_error(request, exc)
        error, status = str(exc.detail), exc.status_code
    context = {
        **extra_context_of(request, extra_context),
        "me": user,
        "passkeys": list(Passkey.objects.filter(user_id=user.pk)),
        "last_factor": is_last_factor(user),
        "error": error,
        "message": message,
        "options_url": reverse("appframework:passkey-options"),
    }
    return render(request, template_name, context, status=status)
