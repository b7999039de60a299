"""Double-submit CSRF protection, with the token bound to the session.

SPEC's rules: a readable cookie (``csrf_token``) holds a random token; POST, PUT, PATCH
and DELETE must echo it in ``X-CSRF-Token`` or the form field ``_token``. Exempt: safe
methods, requests with an ``Authorization`` header, requests without the session cookie
when ``protect_if_cookie_present`` is set, and requests the ``exempt`` predicate accepts.

Beyond plain equality the token is *signed double-submit* (OWASP): its second half is an
HMAC of its first half and the session (user id + a per-login nonce), so a cookie planted
from a sibling subdomain together with a matching header is still refused.

Django's ``get_token``/``{% csrf_token %}`` hand out this same token (we put it where
Django looks, ``request.META["CSRF_COOKIE"]``); Django's masked form field
``csrfmiddlewaretoken`` is accepted next to ``_token``, so the admin login keeps working.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import string
import time
from collections.abc import Awaitable, Callable
from io import BytesIO
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.apps import apps
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import get_callable
from django.utils.cache import patch_vary_headers
from django.utils.crypto import constant_time_compare
from django.utils.http import http_date

from ..conf import AUTO, app_settings, derived_setting
from ..http import problem_response, wants_json

__all__ = ["CsrfMiddleware", "csrf_token"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_CHARS = string.ascii_letters + string.digits  # Django's CSRF_ALLOWED_CHARS
_CHARSET = frozenset(_CHARS)
_HALF = 16
TOKEN_LENGTH = 2 * _HALF  # Django's CSRF_SECRET_LENGTH, so get_token can mask it
_SALT = "appframework.csrf"
#: Session key of the per-login nonce the token is bound to (set on user_logged_in).
NONCE_SESSION_KEY = "_appframework_csrf_nonce"
_STATE_ATTR = "_appframework_csrf"

REASON_NO_COOKIE = "CSRF cookie not set."
REASON_NO_TOKEN = "CSRF token missing."
REASON_MISMATCH = "CSRF token does not match the CSRF cookie."
REASON_FOREIGN = "CSRF token was not issued for this session."


# -- tokens ----------------------------------------------------------------------------
# 62 symbols from a byte: a slight bias, 16 symbols still carry over 95 bits.
_ALNUM_TABLE = bytes(ord(_CHARS[b % 62]) for b in range(256))


def _alnum(raw: bytes) -> str:
    return raw.translate(_ALNUM_TABLE).decode("ascii")


@functools.lru_cache(maxsize=16)
def _key(secret: str) -> bytes:
    # Derived once per secret (as salted_hmac would on every call): a per-purpose key.
    return hashlib.sha256(f"{_SALT}{secret}".encode()).digest()


def _mac(nonce: str, binding: str, secret: str | None = None) -> str:
    key = _key(settings.SECRET_KEY if secret is None else secret)
    return _alnum(hmac.digest(key, f"{nonce}|{binding}".encode(), "sha256")[:_HALF])


def mint_token(binding: str) -> str:
    nonce = _alnum(secrets.token_bytes(_HALF))
    return nonce + _mac(nonce, binding)


def token_is_valid(token: object, binding: str) -> bool:
    if not isinstance(token, str) or len(token) != TOKEN_LENGTH or not _CHARSET.issuperset(token):
        return False
    nonce, mac = token[:_HALF], token[_HALF:]
    if constant_time_compare(mac, _mac(nonce, binding)):
        return True
    # Tokens minted under a rotated-out key stay good while it is a fallback.
    return any(
        constant_time_compare(mac, _mac(nonce, binding, secret))
        for secret in getattr(settings, "SECRET_KEY_FALLBACKS", ())
    )


def _unmask(masked: str) -> str | None:
    """Undo Django's ``_mask_cipher_secret`` (64 chars from ``{% csrf_token %}``)."""
    if len(masked) != 2 * TOKEN_LENGTH or not _CHARSET.issuperset(masked):
        return None
    mask, cipher = masked[:TOKEN_LENGTH], masked[TOKEN_LENGTH:]
    return "".join(
        _CHARS[(_CHARS.index(c) - _CHARS.index(m)) % 62] for c, m in zip(cipher, mask, strict=True)
    )


def session_binding(request: HttpRequest) -> str:
    """What a token is bound to: the logged-in user id and the per-login nonce."""
    session = getattr(request, "session", None)
    if session is None:
        return ""
    if not session.accessed and settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return ""  # no session at all: skip decoding nothing
    uid = session.get(SESSION_KEY)
    if not uid:
        return ""
    return f"{uid}:{session.get(NONCE_SESSION_KEY, '')}"


def rotate_nonce(request: HttpRequest) -> None:
    """Give the session a new nonce (on login), so tokens issued before it stop working."""
    session = getattr(request, "session", None)
    if session is not None:
        session[NONCE_SESSION_KEY] = secrets.token_urlsafe(16)


def csrf_token(request: HttpRequest) -> str | None:
    """The current CSRF token for ``request``, or None when the middleware is not active."""
    if not hasattr(request, _STATE_ATTR):
        return None
    token = request.META.get("CSRF_COOKIE")
    return token if isinstance(token, str) else None


@functools.lru_cache(maxsize=4)
def _expires_at(second: int, max_age: int) -> str:
    return http_date(second + max_age)


def _expires(max_age: int) -> str:
    return _expires_at(int(time.time()), int(max_age))


# -- configuration, resolved once per settings change ------------------------------------------
@derived_setting
def _protect_cookie() -> str | None:
    value = app_settings.CSRF.PROTECT_IF_COOKIE_PRESENT
    if value is AUTO:
        installed = apps.is_installed("appframework.auth")
        return str(settings.SESSION_COOKIE_NAME) if installed else None
    return value or None


def _header_meta_key(name: str) -> str:
    return "HTTP_" + name.upper().replace("-", "_")


@derived_setting
def _header_key() -> str:
    return _header_meta_key(str(app_settings.CSRF.HEADER_NAME))


# -- middleware --------------------------------------------------------------------------
class CsrfMiddleware:
    """Place it after ``SessionMiddleware`` (it reads the session to bind tokens), in
    place of Django's ``CsrfViewMiddleware``."""

    sync_capable = True
    async_capable = True

    def __init__(
        self, get_response: Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]
    ) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
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
        if not self._before(request):
            return await self.get_response(request)  # type: ignore[misc]
        response = await self.get_response(request)  # type: ignore[misc]
        self._after(request, response)
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
        name = app_settings.CSRF.COOKIE_NAME
        max_age = settings.CSRF_COOKIE_AGE
        response.set_cookie(
            name,
            token,
            # A pre-formatted Expires (cached per second) spares http_date() per response.
            expires=_expires(max_age) if max_age is not None else None,
            domain=settings.CSRF_COOKIE_DOMAIN,
            path=settings.CSRF_COOKIE_PATH,
            secure=settings.CSRF_COOKIE_SECURE,
            httponly=False,  # rule 1: the page's script reads it to echo it back
            samesite=settings.CSRF_COOKIE_SAMESITE,
        )
        if max_age is not None:
            response.cookies[name]["max-age"] = int(max_age)
        patch_vary_headers(response, ("Cookie",))

    # view phase: the check itself (here, like Django's, so @csrf_exempt is honoured).
    def process_view(
        self, request: HttpRequest, callback: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        return self._check(request, callback)

    async def _aprocess_view(
        self, request: HttpRequest, callback: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        return self._check(request, callback)

    def _check(self, request: HttpRequest, callback: Callable[..., Any]) -> HttpResponse | None:
        has_authorization = "HTTP_AUTHORIZATION" in request.META
        if has_authorization:
            _ignore_session_user(request)
        if getattr(request, "csrf_processing_done", False):
            return None
        if getattr(request, "_dont_enforce_csrf_checks", False):
            # Django's test Client() unless enforce_csrf_checks=True, as with Django's own.
            request.csrf_processing_done = True  # type: ignore[attr-defined]
            return None
        reason = None
        if (
            app_settings.CSRF.ENABLED
            and request.method not in SAFE_METHODS
            and not has_authorization
            and not getattr(callback, "csrf_exempt", False)
            and not self._exempt(request)
        ):
            reason = self._reason(request)
        if reason is not None:
            return self._reject(request, reason)
        # Tell Django's own @csrf_protect (the admin login) that the check is done.
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
            sent = _unmask(sent) or sent
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


def _form_token(request: HttpRequest) -> str | None:
    content_type = request.content_type or ""
    if content_type not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return None
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
