"""Recent authentication ("sudo mode"): account changes need a factor proven lately.

Adding or removing a passkey, turning TOTP on or off, new recovery codes, issuing or
revoking API tokens, changing the email or the password, unlinking a single sign-on
identity: each needs this session to have proven a factor — a password, a TOTP or
recovery code, a passkey with user verification — within
``AUTH["REAUTHENTICATION_TIMEOUT"]`` seconds (300). Signing in counts; so does the
re-authentication page (``appframework:reauthenticate``). A copied session cookie alone
changes nothing.

A browser without a recent proof is sent to the page and back (:func:`reauthentication_required`,
:class:`ReauthenticationRequiredMixin`); an API client gets 401 ``reauthentication_required``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..errors import response_for_error
from ..exceptions import UnauthorizedException
from ..http import wants_json

__all__ = [
    "AUTHENTICATED_AT_SESSION_KEY",
    "ReauthenticationRequired",
    "ReauthenticationRequiredMixin",
    "reauthentication_required",
    "recently_authenticated",
    "record_authentication",
    "refusal",
    "require_recent_authentication",
]

#: Session key of the last proof: ``{"at": unix time, "method": "password" | ...}``.
AUTHENTICATED_AT_SESSION_KEY = "_appframework_authenticated_at"


class ReauthenticationRequired(UnauthorizedException):
    """401 ``reauthentication_required``: prove a factor again, then repeat the request."""

    default_detail = _("Confirm it's you: sign in again to continue.")
    default_code = "reauthentication_required"


def record_authentication(request: HttpRequest, method: str) -> None:
    """This session proved a factor (``method``) now."""
    session = getattr(request, "session", None)
    if session is not None:
        session[AUTHENTICATED_AT_SESSION_KEY] = {"at": int(time.time()), "method": method}


def recently_authenticated(request: HttpRequest, max_age: float | None = None) -> bool:
    """Whether this session proved a factor within ``max_age`` seconds (default
    ``AUTH["REAUTHENTICATION_TIMEOUT"]``). A request judged by its ``Authorization``
    header has no such proof."""
    session = getattr(request, "session", None)
    if session is None or "HTTP_AUTHORIZATION" in request.META:
        return False
    record = session.get(AUTHENTICATED_AT_SESSION_KEY)
    if not isinstance(record, dict) or not isinstance(record.get("at"), int | float):
        return False
    timeout = app_settings.AUTH.REAUTHENTICATION_TIMEOUT if max_age is None else max_age
    return time.time() - float(record["at"]) <= float(timeout)


def reauthenticate(
    request: HttpRequest,
    user: Any,
    *,
    password: str | None = None,
    code: str | None = None,
    credential: Any = None,
) -> str:
    """Prove one factor of the signed-in ``user`` again and record it; returns the
    factor ("password", "totp", "recovery_code", "passkey"). Every way is bounded as at
    sign-in: the password by the login throttle, a code by the second-factor streak,
    a passkey must verify its user. A wrong answer is ``ValidationException``
    (``reauthentication_failed``), a refused passkey ``PasskeyRefused``."""
    from .. import events
    from ..exceptions import ValidationException

    if password:
        from ..container import container
        from .manager import AuthManager

        found = container.resolve(AuthManager).attempt_sync(
            user.get_username(), password, request=request
        )
        method = "password" if found is not None and found.pk == user.pk else None
    elif code:
        from ..mfa.flows import consume_factor
        from .factor_limit import begin_factor_try

        attempt = begin_factor_try(user.pk)
        method = consume_factor(user, code, request)
        if method is None:
            attempt.failed(request, user)
        else:
            attempt.succeeded()
    elif credential:
        from ..passkeys.ceremonies import REAUTHENTICATE, authenticate

        authenticate(request, credential, REAUTHENTICATE, user)
        method = "passkey"
    else:
        method = None
    if method is None:
        raise ValidationException(
            _("That did not prove it's you; try again."), code="reauthentication_failed"
        )
    record_authentication(request, method)
    events.reauthenticated.send(sender=user._meta.model, user=user, request=request, method=method)
    return method


def require_recent_authentication(request: HttpRequest) -> None:
    """``ReauthenticationRequired`` unless :func:`recently_authenticated`."""
    if not recently_authenticated(request):
        raise ReauthenticationRequired()


def _reauthenticate_url(request: HttpRequest) -> str | None:
    # Django's auth views import the auth models: not at import time (before setup).
    from django.contrib.auth.views import redirect_to_login

    try:
        url = reverse("appframework:reauthenticate")
    except NoReverseMatch:
        return None
    # A POST cannot be replayed after the detour: the page it came from can.
    target = request.get_full_path() if request.method in ("GET", "HEAD") else request.path
    location: str = redirect_to_login(target, url)["Location"]
    return location


def refusal(request: HttpRequest) -> HttpResponse:
    """The answer without a recent proof: 401 problem+json for an API client, a
    redirect to the re-authentication page (and back) for a browser."""
    from django.http import HttpResponseRedirect

    location = None if wants_json(request) else _reauthenticate_url(request)
    if location is None:
        return response_for_error(request, ReauthenticationRequired())
    return HttpResponseRedirect(location)


V = TypeVar("V", bound=Callable[..., Any])


def reauthentication_required(view: V) -> V:
    """Guard a view (sync or async) of your own the way the suite guards account
    changes: without a recent proof, the browser goes to the re-authentication page and
    comes back; an API client gets 401 ``reauthentication_required``."""
    if iscoroutinefunction(view):

        @functools.wraps(view)
        async def async_guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if not await sync_to_async(recently_authenticated)(request):
                return refusal(request)
            return await view(request, *args, **kwargs)

        return async_guarded  # type: ignore[return-value]

    @functools.wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not recently_authenticated(request):
            return refusal(request)
        return view(request, *args, **kwargs)

    return guarded  # type: ignore[return-value]


class ReauthenticationRequiredMixin:
    """For class-based views: ``dispatch`` asks for a recent proof first (after the
    view's own sign-in check, which comes earlier in the bases)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not recently_authenticated(request):
            return refusal(request)
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
