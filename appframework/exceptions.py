"""The suite's exceptions. Each mixes in Django's own, so Django answers sensibly even
without :class:`appframework.middleware.ErrorMiddleware` (403 / 400 / 404 rather than 500).

Every error has a human ``title`` and ``detail`` (translatable) and a stable
machine-readable ``code`` that clients can branch on; the texts may change, the codes
do not (docs/errors.md lists them).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404
from django.utils.translation import gettext_lazy as _

__all__ = [
    "AppFrameworkError",
    "BadGatewayException",
    "BadRequestException",
    "ForbiddenException",
    "MethodNotAllowedException",
    "NotFoundException",
    "PayloadTooLargeException",
    "ServerErrorException",
    "ServiceUnavailableException",
    "TooManyRequestsException",
    "UnauthorizedException",
    "UnsupportedMediaTypeException",
    "ValidationException",
]


class AppFrameworkError(Exception):
    """Base class; ``status_code``, ``title`` and ``code`` drive the HTTP answer."""

    status_code: int = 500
    title: Any = _("Error")
    default_detail: Any = _("The request could not be handled.")
    default_code: str = "error"

    def __init__(self, detail: Any = None, *, code: str | None = None) -> None:
        self.detail = detail or self.default_detail
        self.code = code or self.default_code
        super().__init__(self.detail)

    def __str__(self) -> str:
        return str(self.detail)

    def response_headers(self) -> dict[str, str]:
        return {}


class UnauthorizedException(AppFrameworkError, PermissionDenied):
    """401. ``www_authenticate`` is sent as ``WWW-Authenticate`` (``"Bearer"`` for APIs)."""

    status_code = 401
    title = _("Unauthorized")
    default_detail = _("Authentication is required.")
    default_code = "not_authenticated"

    def __init__(
        self, detail: Any = None, *, code: str | None = None, www_authenticate: str | None = None
    ) -> None:
        super().__init__(detail, code=code)
        self.www_authenticate = www_authenticate

    def response_headers(self) -> dict[str, str]:
        if self.www_authenticate:
            return {"WWW-Authenticate": self.www_authenticate}
        return {}


class ForbiddenException(AppFrameworkError, PermissionDenied):
    """403. ``www_authenticate`` is sent as ``WWW-Authenticate`` (RFC 6750's
    ``insufficient_scope`` challenge for a bearer token used beyond its scopes)."""

    status_code = 403
    title = _("Forbidden")
    default_detail = _("You are not allowed to do this.")
    default_code = "permission_denied"

    def __init__(
        self, detail: Any = None, *, code: str | None = None, www_authenticate: str | None = None
    ) -> None:
        super().__init__(detail, code=code)
        self.www_authenticate = www_authenticate

    def response_headers(self) -> dict[str, str]:
        if self.www_authenticate:
            return {"WWW-Authenticate": self.www_authenticate}
        return {}


class NotFoundException(AppFrameworkError, Http404):
    status_code = 404
    title = _("Not Found")
    default_detail = _("The requested resource was not found.")
    default_code = "not_found"


class MethodNotAllowedException(AppFrameworkError, BadRequest):
    """405 with ``Allow`` listing the methods the resource answers. (Django has no 405
    exception; as a ``BadRequest`` it reaches ``handler400`` when raised outside a
    view, and the suite's handler answers it as the 405 it is.)"""

    status_code = 405
    title = _("Method Not Allowed")
    default_detail = _("This method is not allowed here.")
    default_code = "method_not_allowed"

    def __init__(
        self, detail: Any = None, *, code: str | None = None, allow: str | None = None
    ) -> None:
        super().__init__(detail, code=code)
        self.allow = allow

    def response_headers(self) -> dict[str, str]:
        return {"Allow": self.allow} if self.allow else {}


class BadRequestException(AppFrameworkError, BadRequest):
    status_code = 400
    title = _("Bad Request")
    default_detail = _("The request is malformed.")
    default_code = "bad_request"


class PayloadTooLargeException(AppFrameworkError, BadRequest):
    status_code = 413
    title = _("Content Too Large")
    default_detail = _("The request body is larger than this server accepts.")
    default_code = "payload_too_large"


class UnsupportedMediaTypeException(AppFrameworkError, BadRequest):
    status_code = 415
    title = _("Unsupported Media Type")
    default_detail = _("The request body has a content type this resource does not accept.")
    default_code = "unsupported_media_type"


class ValidationException(AppFrameworkError, BadRequest):
    """422 with the middleware; a plain Django 400 without it."""

    status_code = 422
    title = _("Unprocessable Content")
    default_detail = _("The submitted data is not valid.")
    default_code = "invalid"


class TooManyRequestsException(AppFrameworkError, BadRequest):
    """429 with ``Retry-After`` (whole seconds, at least 1) when ``retry_after`` is known."""

    status_code = 429
    title = _("Too Many Requests")
    default_detail = _("Too many attempts; try again later.")
    default_code = "throttled"

    def __init__(
        self, detail: Any = None, *, code: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(detail, code=code)
        self.retry_after = retry_after

    def response_headers(self) -> dict[str, str]:
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(max(1, int(-(-self.retry_after // 1))))}


class ServerErrorException(AppFrameworkError):
    """What an unexpected error is answered with: no detail of the failure leaks."""

    status_code = 500
    title = _("Internal Server Error")
    default_detail = _("The server could not complete the request.")
    default_code = "server_error"


class BadGatewayException(AppFrameworkError):
    """A service this request depends on (an identity provider) failed or answered
    nonsense: the fault is upstream, not in the request, so 502 rather than 400 or 500."""

    status_code = 502
    title = _("Bad Gateway")
    default_detail = _("An upstream service did not answer as expected.")
    default_code = "bad_gateway"


class ServiceUnavailableException(AppFrameworkError):
    """A store every request relies on (the shared cache, the database) cannot be
    reached: 503 with ``Retry-After``, and the request is refused, never let through
    without the check that store makes (throttles, revocations, one-use values)."""

    status_code = 503
    title = _("Service Unavailable")
    default_detail = _("A service this site depends on is unavailable; try again shortly.")
    default_code = "service_unavailable"

    def __init__(
        self, detail: Any = None, *, code: str | None = None, retry_after: int = 5
    ) -> None:
        super().__init__(detail, code=code)
        self.retry_after = retry_after

    def response_headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}
