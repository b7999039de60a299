"""The one exception-to-response mapping of the suite.

Every error — the suite's own exceptions, Django's ``Http404``, ``PermissionDenied``,
``BadRequest`` and ``SuspiciousOperation``, a 405 from ``require_http_methods``, a URL
that matches nothing — is answered in one format: an RFC 9457 ``application/problem+json``
document for API clients, a small HTML page for browsers, with the same status.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable

from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed

from ._middleware import HybridMiddleware
from .exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    MethodNotAllowedException,
    NotFoundException,
    PayloadTooLargeException,
    ServiceUnavailableException,
)
from .http import PROBLEM_JSON, problem_response, wants_json

__all__ = ["ErrorMiddleware", "app_error", "is_outage", "response_for_error"]


def app_error(exception: BaseException, *, log: bool = True) -> AppFrameworkError | None:
    """The suite's error for ``exception``, or None when it is not an HTTP answer.

    Django's own exceptions get the suite's default texts: their messages are written
    for developers and may name internals. ``log=False`` where Django has logged the
    exception already (its error handlers).
    """
    if isinstance(exception, AppFrameworkError):
        return exception
    if isinstance(exception, Http404):
        return NotFoundException()
    if isinstance(exception, PermissionDenied):
        return ForbiddenException()
    if isinstance(exception, RequestDataTooBig):
        return PayloadTooLargeException()
    if isinstance(exception, SuspiciousOperation):
        if log:
            # Django logs these on django.security.<Name>; so do we, as it would have.
            logging.getLogger(f"django.security.{exception.__class__.__name__}").error(
                str(exception)
            )
        return BadRequestException()
    if isinstance(exception, BadRequest):
        return BadRequestException()
    if is_outage(exception):
        if log:
            logging.getLogger("appframework.outage").error(
                "A shared store is unavailable: %s", exception, exc_info=exception
            )
        return ServiceUnavailableException()
    return None


@functools.cache
def _outage_types() -> tuple[type[BaseException], ...]:
    from django.db import InterfaceError, OperationalError

    types: list[type[BaseException]] = [InterfaceError, OperationalError]
    try:
        import redis.exceptions
    except ImportError:
        pass
    else:
        # Connection refused or reset, a timeout, a server still loading its data set.
        types += [
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            redis.exceptions.BusyLoadingError,
        ]
    return tuple(types)


@functools.cache
def _broker_error() -> type[BaseException] | None:
    try:
        from kombu.exceptions import OperationalError
    except ImportError:
        return None
    return OperationalError


def is_outage(exception: BaseException) -> bool:
    """Whether ``exception`` says a store is unreachable (the Redis cache, the
    database, the Celery broker) rather than that the request or the code is wrong."""
    if isinstance(exception, _outage_types()):
        return True
    broker_error = _broker_error()
    if broker_error is not None and isinstance(exception, broker_error):
        # Kombu wraps every error of the transport in OperationalError, an out-of-memory
        # refusal or a missing permission too: only a connection that failed is an outage.
        cause = exception.__cause__
        return isinstance(cause, OSError) or (cause is not None and is_outage(cause))
    return False


def response_for_error(request: HttpRequest, exc: AppFrameworkError) -> HttpResponse:
    """The response for one of the suite's errors, negotiated on ``Accept``."""
    json_body = wants_json(request)
    return problem_response(
        exc.status_code,
        exc.detail,
        title=exc.title,
        code=exc.code,
        headers=exc.response_headers(),
        json_body=json_body,
        login_url=None if json_body or exc.status_code != 401 else _login_url(request),
    )


def _login_url(request: HttpRequest) -> str | None:
    """``LOGIN_URL`` with ``next`` back to this page, so a browser meeting a 401 is not
    left at a dead end; None when the project has no login page (Django's default
    ``/accounts/login/`` counts only if it resolves)."""
    from django.conf import settings
    from django.contrib.auth.views import redirect_to_login
    from django.shortcuts import resolve_url
    from django.urls import NoReverseMatch, Resolver404, resolve

    try:
        url = resolve_url(settings.LOGIN_URL)
        resolve(url.split("?", 1)[0])
    except (NoReverseMatch, Resolver404):
        return None
    # A GET page is worth coming back to; after a refused POST, the form's page is not
    # known, so the login page keeps its own default.
    if request.method not in ("GET", "HEAD"):
        return url
    location: str = redirect_to_login(request.get_full_path(), url)["Location"]
    return location


def _reformat(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """Django's bare error answers in the suite's format; any other response as it is."""
    if isinstance(response, HttpResponseNotAllowed) and not response.get(
        "Content-Type", ""
    ).startswith(PROBLEM_JSON):
        # require_http_methods / View.http_method_not_allowed (an empty 405), or an API
        # framework's own 405 text (django-ninja's "Method not allowed"): one format.
        allowed = MethodNotAllowedException(allow=response.get("Allow"))
        return response_for_error(request, allowed)
    if response.status_code == 404 and getattr(request, "resolver_match", None) is None:
        # No URL pattern matched, so no view wrote this 404: Django's handler404 (or,
        # under DEBUG, its technical page) did. A browser in DEBUG keeps Django's page,
        # which lists the URL patterns; a project's own handler404 keeps its page.
        from django.conf import settings

        if settings.DEBUG and not wants_json(request):
            return response
        if not settings.DEBUG and not _default_handler404(request):
            return response
        return response_for_error(request, NotFoundException())
    return response


def _default_handler404(request: HttpRequest) -> bool:
    from django.urls import get_resolver
    from django.views import defaults

    from . import views

    handler = get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(404)
    return handler in (defaults.page_not_found, views.page_not_found)


#: What the suite's views may answer; TRACE is never among them.
_ALLOW_WITHOUT_TRACE = "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE"


def _trace_refused(request: HttpRequest) -> HttpResponse:
    """TRACE echoes a request back (cookies and credentials included, the old
    cross-site-tracing trick); no view of a Django site needs it: 405 before any view."""
    return response_for_error(request, MethodNotAllowedException(allow=_ALLOW_WITHOUT_TRACE))


class ErrorMiddleware(HybridMiddleware):
    """Maps errors to responses in one format: 400, 401 (``WWW-Authenticate`` for
    APIs), 403, 404, 405 (``Allow``), 413, 415, 422, 429 (``Retry-After``). A TRACE
    request is a 405 before any view runs.

    Put it last in ``MIDDLEWARE`` so that it sees the view's exceptions first. For
    errors raised outside any view (a 500, or an exception in another middleware) add
    the handlers of :mod:`appframework.views` to the root URLconf.
    """

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.is_async:
            return self.__acall__(request)
        if request.method == "TRACE":
            return _trace_refused(request)
        response: HttpResponse = self.get_response(request)  # type: ignore[assignment]
        return _reformat(request, response) if response.status_code in (404, 405) else response

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "TRACE":
            return _trace_refused(request)
        response: HttpResponse = await self.get_response(request)  # type: ignore[misc]
        return _reformat(request, response) if response.status_code in (404, 405) else response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        error = app_error(exception)
        return None if error is None else response_for_error(request, error)
