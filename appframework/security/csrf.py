"""Double-submit CSRF protection, with the token bound to the session.

The rules: a readable cookie (``csrf_token``) holds a random token, handed out with any
response whose page used the token (``{% csrf_token %}``, Django's ``get_token()``,
:func:`csrf_token`) and whenever the client's cookie no longer fits its session (login,
logout); POST, PUT, PATCH and DELETE must echo it in ``X-CSRF-Token`` (or Django's ``X-CSRFToken``) or the form field
``_token``. Exempt: safe
methods, requests with an ``Authorization`` header, requests without the session cookie
when ``PROTECT_IF_COOKIE_PRESENT`` is set (except views marked
:func:`csrf_protect_login`), and requests the ``CSRF_EXEMPT`` predicate accepts. A
checked request must also come from this site's origin or a trusted one (``origin``).

Beyond plain equality the token is *signed double-submit* (see ``tokens``): its second
half is a MAC of its first half and the session (user id + a per-login nonce), so a
cookie planted from a sibling subdomain with a matching header is still refused.

Django's ``get_token``/``{% csrf_token %}`` hand out this same token (we put it where
Django looks, ``request.META["CSRF_COOKIE"]``); Django's masked form field
``csrfmiddlewaretoken`` is accepted next to ``_token``, so the admin login keeps working.

Each decision is a public method a subclass may override: :meth:`CsrfMiddleware.is_exempt`,
:meth:`~CsrfMiddleware.check_origin`, :meth:`~CsrfMiddleware.check_token` and
:meth:`~CsrfMiddleware.reject` (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieSession
from django.http import HttpRequest, HttpResponse, QueryDict
from django.middleware.csrf import CsrfViewMiddleware
from django.urls import get_callable
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from ..conf import AUTO, app_settings, derived_setting
from ..errors import answer_outage
from ..exceptions import ForbiddenException
from ..http import (
    has_authorization,
    header_meta_key,
    is_app_request,
    set_request_user,
    wants_json,
)
from ..middleware_base import GetResponse, HybridMiddleware
from .cookie import csrf_cookie_name, set_csrf_cookie
from .origin import REASONS as ORIGIN_REASONS
from .origin import origin_problem
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
    "NEEDS_UPDATE",
    "NONCE_SESSION_KEY",
    "REASONS",
    "CsrfFailure",
    "CsrfMiddleware",
    "csrf_protect_login",
    "csrf_token",
    "mint_token",
    "rotate_nonce",
    "session_binding",
    "session_csrf_failure",
    "token_is_valid",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_STATE_ATTR = "_appframework_csrf"
#: Django's own flag: ``get_token()`` (``{% csrf_token %}``) sets it when a page used the
#: token, so the response must carry the cookie.
NEEDS_UPDATE = "CSRF_COOKIE_NEEDS_UPDATE"

REASON_NO_COOKIE = _("CSRF cookie not set.")
REASON_NO_TOKEN = _("CSRF token missing.")
REASON_MISMATCH = _("CSRF token does not match the CSRF cookie.")
REASON_FOREIGN = _("CSRF token was not issued for this session.")

#: Stable code → message of every way the check fails.
REASONS: dict[str, Any] = {
    "csrf_cookie_missing": REASON_NO_COOKIE,
    "csrf_token_missing": REASON_NO_TOKEN,
    "csrf_token_mismatch": REASON_MISMATCH,
    "csrf_token_foreign": REASON_FOREIGN,
    **ORIGIN_REASONS,
}


class CsrfFailure(ForbiddenException):
    """A request refused by the CSRF check: 403, ``code`` names the reason."""

    title = _("CSRF verification failed")
    default_code = "csrf_failed"

    @classmethod
    def for_code(cls, code: str) -> CsrfFailure:
        return cls(REASONS[code], code=code)


def csrf_token(request: HttpRequest) -> str | None:
    """The current CSRF token for ``request``, or None when the middleware is not active.

    Like Django's ``get_token()``, asking for it makes the response carry the cookie."""
    if not hasattr(request, _STATE_ATTR):
        return None
    token = request.META.get("CSRF_COOKIE")
    if not isinstance(token, str):
        return None
    request.META[NEEDS_UPDATE] = True
    return token


V = TypeVar("V", bound=Callable[..., Any])


def csrf_protect_login(view: V) -> V:
    """Check the CSRF token on this view even when the request has no session cookie
    or carries an ``Authorization`` header.

    Views that *establish* a session (a login form, sign-up, an MFA challenge, an SSO
    callback that POSTs) are the target of login CSRF: a third-party page posts the
    attacker's credentials and the visitor ends up signed in as the attacker. Those
    requests carry no session cookie yet, so the cookie-presence exemption would let
    them through; this marker takes that exemption away, and the ``Authorization``
    one too (a cross-site form cannot send that header, but a script with ``Basic``
    junk could, and the session cookie set in reply is still the browser's). Mark the
    logout view too: ending a session is as much the browser's business. Works on sync
    and async views.
    """
    view.csrf_protect_login = True  # type: ignore[attr-defined]
    return view


# -- configuration, resolved once per settings change ------------------------------------------
@derived_setting
def _protect_cookie() -> str | None:
    value = app_settings.CSRF.PROTECT_IF_COOKIE_PRESENT
    if value is AUTO:
        installed = apps.is_installed("appframework.auth")
        return session_cookie_name() if installed else None
    return value or None


@derived_setting
def _header_key() -> str:
    return header_meta_key(str(app_settings.CSRF.HEADER_NAME))


@derived_setting
def _django_header_key() -> str:
    # Django's own header (``X-CSRFToken`` unless CSRF_HEADER_NAME says otherwise) is
    # accepted beside ours: the JavaScript of an existing project keeps working.
    return str(settings.CSRF_HEADER_NAME)


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
        try:
            # Reads the session, and through it the record of ended sessions.
            before = self._before(request)
        except Exception as exc:
            return answer_outage(request, exc)
        if not before:
            return self.get_response(request)
        response = self.get_response(request)
        self._after(request, response)  # type: ignore[arg-type]
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        # Signed-cookie sessions decode in memory; any other engine does I/O to load,
        # which must not run on the event loop.
        offload = not _session_loads_in_memory(request)
        before = sync_to_async(self._before) if offload else _as_coroutine(self._before)
        try:
            proceed = await before(request)
        except Exception as exc:
            return answer_outage(request, exc)
        if not proceed:
            return await self.get_response(request)  # type: ignore[misc]
        response = await self.get_response(request)  # type: ignore[misc]
        after = sync_to_async(self._after) if offload else _as_coroutine(self._after)
        await after(request, response)
        return response

    # request phase: put a token where get_token() looks, remember the incoming cookie.
    def _before(self, request: HttpRequest) -> bool:
        if not app_settings.CSRF.ENABLED:
            return False
        incoming = request.COOKIES.get(csrf_cookie_name())
        binding = session_binding(request)
        valid = incoming is not None and token_is_valid(incoming, binding)
        token = incoming if valid else mint_token(binding)
        request.META["CSRF_COOKIE"] = token
        setattr(request, _STATE_ATTR, (incoming, binding, token))
        return True

    # response phase: hand the client a token valid for the session as it is now, when
    # the page used the token or the client holds a cookie that is not that token
    # (login, logout, a stale or foreign cookie). Like Django, a client that has no
    # cookie gets none from a page that never asked for the token.
    def _after(self, request: HttpRequest, response: HttpResponse) -> None:
        if has_authorization(request) or is_app_request(request):
            # API clients with their own credential (a bearer token, an app's session
            # token) need no CSRF cookie, and an app keeps no cookies at all.
            return
        incoming, binding_before, token_before = getattr(request, _STATE_ATTR)
        meta = request.META
        if incoming is None and not meta.get(NEEDS_UPDATE):
            return
        binding = session_binding(request)
        token = meta.get("CSRF_COOKIE")
        # Same session and the very token _before validated or minted: no re-check.
        # Login changes the binding, and Django's rotate_token() puts a new object there.
        if (binding != binding_before or token is not token_before) and (
            not isinstance(token, str) or not token_is_valid(token, binding)
        ):
            token = mint_token(binding)
            meta["CSRF_COOKIE"] = token
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
        # Django's flag ``csrf_processing_done`` means "verified": it is set below only
        # when this middleware checked the token. Skipping the check (test client, CSRF
        # off, a safe method, an exempt request) leaves it alone, so whatever enforces
        # CSRF later — DRF's and django-ninja's session auth, ``@csrf_protect`` — still
        # runs its own check instead of trusting one that never happened.
        if (
            getattr(request, "_dont_enforce_csrf_checks", False)  # Django's test Client()
            or not app_settings.CSRF.ENABLED
            or request.method in SAFE_METHODS
        ):
            return None
        if self.is_exempt(request, callback):
            return None
        failure = self.verify(request)
        if failure is None:
            # Verified: Django's @csrf_protect, DRF and ninja need not check again.
            request.csrf_processing_done = True  # type: ignore[attr-defined]
            return None
        if getattr(callback, "csrf_exempt", False):
            # The view opted out (DRF and ninja views all do, and enforce CSRF in their
            # session auth instead). Not verified, so not marked; a cookie minted for
            # another session is taken away so that their check, which knows nothing of
            # session binding, cannot accept a planted cookie/header pair either.
            if failure.code == "csrf_token_foreign":
                request.COOKIES.pop(csrf_cookie_name(), None)
            return None
        return self.reject(request, failure)

    # -- the decision steps; override any of them in a subclass ---------------------------
    def is_exempt(self, request: HttpRequest, callback: Callable[..., Any]) -> bool:
        """True when the request needs no CSRF check: it carries its own credential
        (``Authorization``, which a browser cannot attach cross-site), it has no session
        cookie to abuse (unless the view establishes a session: ``csrf_protect_login``),
        or the project's ``CSRF_EXEMPT`` predicate says so."""
        if getattr(callback, "csrf_protect_login", False):
            # A view that signs a browser in or out is checked whatever the request
            # carries: an Authorization header (Basic junk, say) does not make the
            # session cookie it sets or ends any less the browser's.
            return False
        if has_authorization(request):
            return True
        protect = _protect_cookie()
        if protect is not None and protect not in request.COOKIES:
            return True
        predicate = app_settings.AUTH.CSRF_EXEMPT
        return bool(predicate is not None and predicate(request))

    def verify(self, request: HttpRequest) -> CsrfFailure | None:
        """The whole check of a request that is not exempt: its origin, then its token."""
        return self.check_origin(request) or self.check_token(request)

    def check_origin(self, request: HttpRequest) -> CsrfFailure | None:
        """The failure when ``Origin`` (or, over HTTPS without it, ``Referer``) names
        another site than this one or ``CSRF_TRUSTED_ORIGINS``; None when it is fine."""
        if not app_settings.CSRF.CHECK_ORIGIN:
            return None
        code = origin_problem(request)
        return None if code is None else CsrfFailure.for_code(code)

    def check_token(self, request: HttpRequest) -> CsrfFailure | None:
        """The failure when the request does not echo a valid token of this session."""
        cookie = request.COOKIES.get(csrf_cookie_name())
        if not cookie:
            return CsrfFailure.for_code("csrf_cookie_missing")
        meta = request.META
        sent = meta.get(_header_key()) or meta.get(_django_header_key()) or _form_token(request)
        if not sent:
            return CsrfFailure.for_code("csrf_token_missing")
        if len(sent) == 2 * TOKEN_LENGTH:
            sent = unmask(sent) or sent
        if not constant_time_compare(sent, cookie):
            return CsrfFailure.for_code("csrf_token_mismatch")
        if not token_is_valid(cookie, session_binding(request)):
            return CsrfFailure.for_code("csrf_token_foreign")
        return None

    def reject(self, request: HttpRequest, failure: CsrfFailure) -> HttpResponse:
        """The 403 answer: the suite's problem document for API clients; for browsers the
        project's ``CSRF_FAILURE_VIEW``, as Django's own middleware renders it."""
        if wants_json(request):
            from ..errors import response_for_error

            return response_for_error(request, failure)
        response: HttpResponse = get_callable(settings.CSRF_FAILURE_VIEW)(
            request, reason=str(failure.detail)
        )
        return response


def session_csrf_failure(request: HttpRequest) -> CsrfFailure | None:
    """Why a session-authenticated request fails CSRF, or None when it passes.

    For authentication classes of API frameworks (DRF's and django-ninja's session
    auth), whose views are ``@csrf_exempt`` and check CSRF once they know the request
    is authenticated by its session cookie. Passes: a request this middleware already
    verified, Django's test client, CSRF off (``CSRF["ENABLED"]``) and safe methods.
    Otherwise the suite's rules: ``Origin`` and a token of this session in
    ``X-CSRF-Token``, Django's ``X-CSRFToken`` or a form field. Without the suite's
    middleware on the request (Django's ``CsrfViewMiddleware`` in its place), Django's
    own check decides.
    """
    if (
        getattr(request, "csrf_processing_done", False)
        or getattr(request, "_dont_enforce_csrf_checks", False)
        or not app_settings.CSRF.ENABLED
        or request.method in SAFE_METHODS
    ):
        return None
    if not hasattr(request, _STATE_ATTR):
        return _django_csrf_failure(request)
    failure = _checker().verify(request)
    if failure is None:
        request.csrf_processing_done = True  # type: ignore[attr-defined]
    return failure


@derived_setting
def _checker() -> CsrfMiddleware:
    return _middleware_class()(_no_response)


def _no_response(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


def _middleware_class() -> type[CsrfMiddleware]:
    """The project's CSRF middleware class (a subclass may override the decision
    steps), else this one."""
    from django.utils.module_loading import import_string

    for path in settings.MIDDLEWARE:
        try:
            cls = import_string(path)
        except ImportError:
            continue
        if isinstance(cls, type) and issubclass(cls, CsrfMiddleware):
            return cls
    return CsrfMiddleware


class _DjangoCheck(CsrfViewMiddleware):
    def _reject(self, request: HttpRequest, reason: str) -> Any:
        return reason  # the reason, not the failure page (DRF does the same)


def _django_csrf_failure(request: HttpRequest) -> CsrfFailure | None:
    check = _DjangoCheck(_no_response)
    check.process_request(request)
    reason = check.process_view(request, None, (), {})  # type: ignore[arg-type]
    return None if reason is None else CsrfFailure(reason, code="csrf_failed")


_FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


def _session_loads_in_memory(request: HttpRequest) -> bool:
    """Whether loading the session does no I/O: Django's signed cookies decode in
    memory; a store may say otherwise with a ``loads_in_memory`` attribute (the suite's
    own store reads its record of ended sessions)."""
    session = getattr(request, "session", None)
    if session is None:
        return True
    return bool(getattr(session, "loads_in_memory", isinstance(session, SignedCookieSession)))


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

    set_request_user(request, AnonymousUser())
