"""The suite's exceptions. Each mixes in Django's own, so Django answers sensibly even
without :class:`appframework.middleware.ErrorMiddleware` (403 / 400 rather than 500)."""

from __future__ import annotations

from django.core.exceptions import BadRequest, PermissionDenied

__all__ = [
    "AppFrameworkError",
    "BadRequestException",
    "ForbiddenException",
    "TooManyRequestsException",
    "UnauthorizedException",
    "ValidationException",
]


class AppFrameworkError(Exception):
    """Base class; ``status_code`` and ``title`` drive the HTTP answer."""

    status_code: int = 500
    title: str = "Error"
    default_detail: str = "The request could not be handled."

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail or self.default_detail
        super().__init__(self.detail)

    def response_headers(self) -> dict[str, str]:
        return {}


class UnauthorizedException(AppFrameworkError, PermissionDenied):
    """401. ``www_authenticate`` is sent as ``WWW-Authenticate`` (``"Bearer"`` for APIs)."""

    status_code = 401
    title = "Unauthorized"
    default_detail = "Authentication is required."

    def __init__(self, detail: str | None = None, *, www_authenticate: str | None = None) -> None:
        super().__init__(detail)
        self.www_authenticate = www_authenticate

    def response_headers(self) -> dict[str, str]:
        if self.www_authenticate:
            return {"WWW-Authenticate": self.www_authenticate}
        return {}


class ForbiddenException(AppFrameworkError, PermissionDenied):
    status_code = 403
    title = "Forbidden"
    default_detail = "You are not allowed to do this."


class BadRequestException(AppFrameworkError, BadRequest):
    status_code = 400
    title = "Bad Request"
    default_detail = "The request is malformed."


class ValidationException(AppFrameworkError, BadRequest):
    """422 with the middleware; a plain Django 400 without it."""

    status_code = 422
    title = "Unprocessable Content"
    default_detail = "The submitted data is not valid."


class TooManyRequestsException(AppFrameworkError, BadRequest):
    """429 with ``Retry-After`` (whole seconds, at least 1) when ``retry_after`` is known."""

    status_code = 429
    title = "Too Many Requests"
    default_detail = "Too many attempts; try again later."

    def __init__(self, detail: str | None = None, *, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.retry_after = retry_after

    def response_headers(self) -> dict[str, str]:
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(max(1, int(-(-self.retry_after // 1))))}
