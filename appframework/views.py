"""Django error handlers in the suite's one error format.

``ErrorMiddleware`` formats every error a view raises or returns. Errors raised outside
any view — an unexpected exception (500), or one raised by another middleware — reach
Django's handlers instead; point them here in the root URLconf::

    handler400 = "appframework.views.bad_request"
    handler403 = "appframework.views.permission_denied"
    handler404 = "appframework.views.page_not_found"
    handler500 = "appframework.views.server_error"
"""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse

from .errors import app_error, is_outage, response_for_error
from .exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    NotFoundException,
    ServerErrorException,
    ServiceUnavailableException,
)

__all__ = ["bad_request", "page_not_found", "permission_denied", "server_error"]


def _respond(
    request: HttpRequest, exception: BaseException | None, fallback: type[AppFrameworkError]
) -> HttpResponse:
    error = app_error(exception, log=False) if exception is not None else None
    return response_for_error(request, error or fallback())


def bad_request(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return _respond(request, exception, BadRequestException)


def permission_denied(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return _respond(request, exception, ForbiddenException)


def page_not_found(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return _respond(request, exception, NotFoundException)


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this inside its ``except`` block: an exception raised outside any view
    # (a middleware reading the shared cache) is still at hand. A store outage is a 503
    # the client may retry; anything else a 500 that never shows the exception's text.
    exception = sys.exc_info()[1]
    if exception is not None and is_outage(exception):
        return response_for_error(request, ServiceUnavailableException())
    return response_for_error(request, ServerErrorException())
