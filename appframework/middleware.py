"""The one exception-to-response mapping of the suite."""

from __future__ import annotations

from collections.abc import Awaitable

from django.http import HttpRequest, HttpResponse

from ._middleware import HybridMiddleware
from .exceptions import AppFrameworkError, BadRequestException, ForbiddenException
from .http import problem_response, wants_json

__all__ = ["ErrorMiddleware", "response_for_error"]


def response_for_error(request: HttpRequest, exc: AppFrameworkError) -> HttpResponse | None:
    """The response for one of the suite's exceptions.

    ``None`` hands a 403/400 for an HTML client back to Django, so the project's own
    ``handler403``/``handler400`` templates render as they always have.
    """
    as_json = wants_json(request)
    if (
        not as_json
        and type(exc).status_code in (403, 400)
        and isinstance(exc, ForbiddenException | BadRequestException)
    ):
        return None
    return problem_response(
        exc.status_code,
        exc.detail,
        title=exc.title,
        headers=exc.response_headers(),
        json_body=as_json,
    )


class ErrorMiddleware(HybridMiddleware):
    """Maps UnauthorizedException → 401, ForbiddenException → 403, BadRequestException
    → 400, ValidationException → 422, TooManyRequestsException → 429."""

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        # Exceptions are seen through process_exception; __call__ only passes through.
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, AppFrameworkError):
            return response_for_error(request, exception)
        return None
