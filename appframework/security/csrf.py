"""Double-submit CSRF protection, with the token bound to the session.

SPEC's rules: a readable cookie (``csrf_token``) holds a random token; POST, PUT, PATCH
and DELETE must echo it in ``X-CSRF-Token`` or the form field ``_token``. Exempt: safe
methods, requests with an ``Authorization`` header, requests without the session cookie
when ``protect_if_cookie_present`` is set, and requests the ``exempt`` predicate accepts.

Beyond plain equality the token is *signed double-submit* (OWASP, see ``tokens``): its
second half is a MAC of its first half and the session (user id + a per-login nonce),
so a cookie planted from a sibling subdomain with a matching header is still refused.

Django's ``get_token``/``{% csrf_token %}`` hand out this same token (we put it where
Django looks, ``request.META["CSRF_COOKIE"]``); Django's masked form field
``csrfmiddlewaretoken`` is accepted next to ``_token``, so the admin login keeps working.
"""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from typing import Any

from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieSession
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import get_callable
from django.utils.crypto import constant_time_compare

from .._middleware import GetResponse, HybridMiddleware
from ..conf import AUTO, app_settings, derived_setting
from ..http import has_authorization, problem_response, wants_json
from .cookie import set_csrf_cookie
from .tokens import (
    NONCE_SESSION_KEY,
    TOKEN_LENGTH,
    mint_token,
    rotate_nonce,
    session_binding,
    session_cookie_name,
    token_is_valid,
    unmask,
)

__all__ = [
    "NONCE_SESSION_KEY",
    "CsrfMiddleware",
    "csrf_token",
    "mint_token",
    "rotate_nonce",
    "session_binding",
    "token_is_valid",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_STATE_ATTR = "_appframework_csrf"

REASON_NO_COOKIE = "CSRF cookie not set."
REASON_NO_TOKEN = "CSRF token missing."
REASON_MISMATCH = "CSRF token does not match the CSRF cookie."
REASON_FOREIGN = "CSRF token was not issued for this session."


def csrf_token(request: HttpRequest) -> str | None:
    """The current CSRF token for ``request``, or None when the middleware is not active."""
    if not hasattr(request, _STATE_ATTR):
        return None
    token = request.META.get("CSRF_COOKIE")
    return token if isinstance(token, str) else None


# -- configuration, resolved once per settings change ------------------------------------------
@derived_setting
def _protect_cookie() -> str | None:
    value = app_settings.CSRF.PROTECT_IF_COOKIE_PRESENT
    if value is AUTO:
        installed = apps.is_installed("appframework.auth")
        return session_cookie_name() if installed else None
    return value or None


def _header_meta_key(name: str) -> str:
    return "HTTP_" + name.upper().replace("-", "_")


@derived_setting
def _header_key() -> str:
    return _header_meta_key(str(app_settings.CSRF.HEADER_NAME))


# -- middleware --------------------------------------------------------------------------
class CsrfMiddleware(HybridMiddleware):
    """Place it after ``SessionMiddleware`` (it reads the session to bind tokens), in
    place of Django's ``CsrfViewMiddleware``."""

    def __init__(self, get_response: GetResponse) -> None:
        super().__init__(get_response)
        if self.is_async:
            # An async twin keeps ASGI requests off the sync_to_async thread hop.
            self.process_view = self._aprocess_view  # type: ignore[method-assign,assignment]

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        if not self._before(request):
            return self.get_response(request)
        response = self.get_response(request)
        self._after(request, response)  # type: ignore[arg-type]
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        # Signed-cookie sessions decode in memory; any other engine does I/O to load,
        # which must not run on the event loop.
        offload = not _session_loads_in_memory(request)
        before = sync_to_async(self._before) if offload else _as_coroutine(self._before)
        if not await before(request):
            return await self.get_response(request)  # type: ignore[misc]
        response = await self.get_response(request)  # type: ignore[misc]
        after = sync_to_async(self._after) if offload else _as_coroutine(self._after)
        await after(request, response)
        return response

    # request phase: put a token where get_token() looks, remember the incoming cookie.
    def _before(self, request: HttpRequest) -> bool:
        if not app_settings.CSRF.ENABLED:
            return False
        incoming = request.COOKIES.get(app_settings.CSRF.COOKIE_NAME)
        binding = session_binding(request)
        valid = incoming is not None and token_is_valid(incoming, binding)
        token = incoming if valid else mint_token(binding)
        request.META["CSRF_COOKIE"] = token
        setattr(request, _STATE_ATTR, (incoming, binding, token))
        return True

    # response phase: if the session changed (login/logout) or the client has no valid
    # token, send one that is valid for the session as it is now.
    def _after(self, request: HttpRequest, response: HttpResponse) -> None:
        if has_authorization(request):
            return  # API clients with their own credential need no CSRF cookie
        incoming, binding_before, token_before = getattr(request, _STATE_ATTR)
        binding = session_binding(request)
        token = request.META.get("CSRF_COOKIE")
        # Same session and the very token _before validated or minted: no re-check.
        # Login changes the binding, and Django's rotate_token() puts a new object there.
        if (binding != binding_before or token is not token_before) and (
            not isinstance(token, str) or not token_is_valid(token, binding)
        ):
            token = mint_token(binding)
            request.META["CSRF_COOKIE"] = token
        if token == incoming:
            return
        set_csrf_cookie(response, token)

    # view phase: the check itself (here, like Django's, so @csrf_exempt is honoured).
    def process_view(
        self, request: HttpRequest, callback: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        return self._check(request, callback)

    async def _aprocess_view(
        self, request: HttpRequest, callback: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        # Form parsing (temp files for uploads), the project's exempt predicate (it may
        # use the ORM) and a non-cookie session load belong in a worker thread.
        if request.method not in SAFE_METHODS and (
            app_settings.AUTH.CSRF_EXEMPT is not None
            or request.content_type in _FORM_TYPES
            or not _session_loads_in_memory(request)
        ):
            return await sync_to_async(self._check)(request, callback)
        return self._check(request, callback)

    def _check(self, request: HttpRequest, callback: Callable[..., Any]) -> HttpResponse | None:
        authorization = has_authorization(request)
        if authorization:
            _ignore_session_user(request)
        if getattr(request, "csrf_processing_done", False):
            return None
        if (
            getattr(request, "_dont_enforce_csrf_checks", False)  # Django's test Client()
            or not app_settings.CSRF.ENABLED
            or request.method in SAFE_METHODS
            or getattr(callback, "csrf_exempt", False)
        ):
            request.csrf_processing_done = True  # type: ignore[attr-defined]
            return None
        if authorization or self._exempt(request):
            # Exempt by SPEC rule 3, but not *verified*: a view under Django's own
            # @csrf_protect (the admin login, LoginView) still gets Django's check.
            return None
        reason = self._reason(request)
        if reason is not None:
            return self._reject(request, reason)
        # Verified: tell Django's @csrf_protect not to check again.
        request.csrf_processing_done = True  # type: ignore[attr-defined]
        return None

    @staticmethod
    def _exempt(request: HttpRequest) -> bool:
        protect = _protect_cookie()
        if protect is not None and protect not in request.COOKIES:
            return True
        predicate = app_settings.AUTH.CSRF_EXEMPT
        return bool(predicate is not None and predicate(request))

    @staticmethod
    def _reason(request: HttpRequest) -> str | None:
        cookie = request.COOKIES.get(app_settings.CSRF.COOKIE_NAME)
        if not cookie:
            return REASON_NO_COOKIE
        sent = request.META.get(_header_key()) or _form_token(request)
        if not sent:
            return REASON_NO_TOKEN
        if len(sent) == 2 * TOKEN_LENGTH:
            sent = unmask(sent) or sent
        if not constant_time_compare(sent, cookie):
            return REASON_MISMATCH
        if not token_is_valid(cookie, session_binding(request)):
            return REASON_FOREIGN
        return None

    @staticmethod
    def _reject(request: HttpRequest, reason: str) -> HttpResponse:
        if wants_json(request):
            return problem_response(403, reason, title="CSRF verification failed")
        # The project's CSRF_FAILURE_VIEW, as Django's own middleware renders it.
        response: HttpResponse = get_callable(settings.CSRF_FAILURE_VIEW)(request, reason=reason)
        return response


_FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


def _session_loads_in_memory(request: HttpRequest) -> bool:
    session = getattr(request, "session", None)
    return session is None or isinstance(session, SignedCookieSession)


def _as_coroutine(func: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any) -> Any:
        return func(*args)

    return call


def _form_token(request: HttpRequest) -> str | None:
    content_type = request.content_type or ""
    if content_type not in _FORM_TYPES:
        return None
    post: QueryDict
    try:
        if request.method == "POST":
            post = request.POST
        elif content_type == "multipart/form-data":
            # Django parses bodies into request.POST for POST only; PUT/PATCH/DELETE
            # forms (method-override setups) carry the field too.
            post, _ = request.parse_file_upload(request.META, BytesIO(request.body))
        else:
            post = QueryDict(request.body, encoding=request.encoding)
    except Exception:
        # A malformed body is a missing token, not a 500 (Django does the same).
        return None
    value = post.get(app_settings.CSRF.FORM_FIELD) or post.get("csrfmiddlewaretoken")
    return value if isinstance(value, str) else None


def _ignore_session_user(request: HttpRequest) -> None:
    """A request carrying ``Authorization`` is judged by that credential alone: never
    CSRF-exempt *and* session-authenticated at once."""
    if not hasattr(request, "user"):
        return
    from django.contrib.auth.models import AnonymousUser

    anonymous = AnonymousUser()
    request.user = anonymous

    async def auser() -> AnonymousUser:
        return anonymous

    request.auser = auser
