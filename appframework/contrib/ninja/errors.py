"""Exception handlers that make a ``NinjaAPI`` answer in the suite's format."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError

from ...auth.tokens import bearer_unauthorized
from ...errors import app_error, field_errors, problem_http_response, status_error
from ...exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    MethodNotAllowedException,
    NotFoundException,
    PayloadTooLargeException,
    TooManyRequestsException,
    UnauthorizedException,
    UnsupportedMediaTypeException,
    ValidationException,
)
from ...http import has_authorization
from .security import BEARER_EXPECTED

__all__ = ["install_exception_handlers"]

# What ninja raises when no auth of an operation accepted the request.
_NINJA_DEFAULT_401 = AuthenticationError().message

_BY_STATUS: dict[int, type[AppFrameworkError]] = {
    cls.status_code: cls
    for cls in (
        BadRequestException,
        UnauthorizedException,
        ForbiddenException,
        NotFoundException,
        MethodNotAllowedException,
        PayloadTooLargeException,
        UnsupportedMediaTypeException,
        ValidationException,
    )
}


def _not_authenticated(request: HttpRequest) -> UnauthorizedException:
    """No auth of the operation accepted the request: the suite's 401, with the bearer
    challenge when ``BearerAuth`` was among them (``invalid_token`` when a token was
    sent), as the suite's own views answer."""
    if not getattr(request, BEARER_EXPECTED, False):
        return UnauthorizedException()
    if has_authorization(request):
        return bearer_unauthorized(request)
    # Other auths (a session) may have been possible too: no "a token is required".
    return UnauthorizedException(www_authenticate="Bearer")


def _http_error(request: HttpRequest, exc: HttpError) -> AppFrameworkError:
    if isinstance(exc, AuthenticationError) and exc.message == _NINJA_DEFAULT_401:
        return _not_authenticated(request)
    if isinstance(exc, Throttled):
        return TooManyRequestsException(exc.message, retry_after=exc.wait)
    cls = _BY_STATUS.get(exc.status_code)
    if cls is not None:
        return cls(exc.message)
    return status_error(exc.status_code, exc.message, "error")


def _validation_errors(exc: ValidationError) -> dict[str, Any]:
    # ninja's loc names where the value came from and its path: body.payload.title.
    return field_errors(
        (
            ".".join(str(part) for part in error.get("loc", ())) or "non_field_errors",
            str(error.get("type", "invalid")),
            str(error.get("msg", "")),
        )
        for error in exc.errors
    )


def _on_validation(request: HttpRequest, exc: Any) -> HttpResponse:
    error = ValidationException(_("The submitted data is not valid."), code="invalid")
    return problem_http_response(request, error, _validation_errors(exc))


def _on_http_error(request: HttpRequest, exc: Any) -> HttpResponse:
    # ninja wraps whatever its parser raised in a 400 HttpError: the suite's own error
    # underneath (json_too_deep from BoundedParser) keeps its code.
    cause = exc.__cause__
    if isinstance(cause, AppFrameworkError):
        return problem_http_response(request, cause)
    return problem_http_response(request, _http_error(request, exc))


def _on_suite_error(request: HttpRequest, exc: Any) -> HttpResponse:
    error = app_error(exc)
    if error is None:  # not an HTTP answer after all: Django's 500 handling
        raise exc
    return problem_http_response(request, error)


def install_exception_handlers(api: NinjaAPI) -> NinjaAPI:
    """Answer ``api``'s errors as the rest of the site does: ninja's validation errors
    (422, with ``errors: {field: [{code, message}]}``), ``HttpError`` (401, 403, 429 with
    ``Retry-After``...), ``Http404`` and the suite's and Django's exceptions as problem
    documents. Returns ``api``."""
    from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
    from django.http import Http404

    api.add_exception_handler(ValidationError, _on_validation)
    api.add_exception_handler(HttpError, _on_http_error)
    for exc_class in (
        AppFrameworkError,
        Http404,
        PermissionDenied,
        BadRequest,
        SuspiciousOperation,
    ):
        api.add_exception_handler(exc_class, _on_suite_error)
    return api
