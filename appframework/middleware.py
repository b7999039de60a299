"""``ErrorMiddleware``: every error a view raises or returns in the suite's one format.

The suite's own exceptions, Django's ``Http404``, ``PermissionDenied``, ``BadRequest``
and ``SuspiciousOperation``, a 405 from ``require_http_methods``, a URL that matches
nothing: each is answered through :mod:`appframework.errors` — an RFC 9457
``application/problem+json`` document for API clients, a small HTML page for browsers,
with the same status.
"""

from __future__ import annotations

from collections.abc import Awaitable

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed

from .errors import app_error, response_for_error
from .exceptions import MethodNotAllowedException, NotFoundException
from .http import PROBLEM_JSON, wants_json
from .middleware_base import HybridMiddleware

__all__ = ["ErrorMiddleware"]


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
