"""DRF authentication classes over the suite's bearer tokens and sessions."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ...auth.sessions import current_user_sync
from ...auth.tokens import _unauthorized, bearer_token, current_api_user_sync
from ...http import has_authorization
from ...security.csrf import session_csrf_failure

__all__ = ["BearerTokenAuthentication", "SessionAuthentication"]


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` with the suite's API tokens (expiry, revocation,
    password change and "log out everywhere" included). ``request.auth`` is the token.

    A request without a bearer token is left to the next class (DRF's ``Token`` scheme,
    a session...); a bad, expired or revoked token is a 401 with
    ``WWW-Authenticate: Bearer error="invalid_token"``. Its ``authenticate_header``
    makes DRF answer 401, not 403, to anonymous requests when it is listed first.
    """

    def authenticate(self, request: Request) -> tuple[Any, str] | None:
        token = bearer_token(request._request)
        if token is None:
            return None
        user = current_api_user_sync(request._request)
        if user is None:
            error = _unauthorized(request._request)
            raise exceptions.AuthenticationFailed(error.detail, code=error.code)
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return _unauthorized(request._request).www_authenticate or "Bearer"


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication under the suite's CSRF rules: ``Origin`` plus a
    token of *this* session (signed double-submit) in ``X-CSRF-Token``, Django's
    ``X-CSRFToken`` or the form field. A request carrying ``Authorization`` is judged by
    that credential alone; a user whose two-factor challenge is still pending is not
    signed in, so gets nothing from the session.
    """

    def authenticate(self, request: Request) -> tuple[Any, None] | None:
        django_request = request._request
        if has_authorization(django_request):
            return None
        user = current_user_sync(django_request)
        if user is None:
            return None
        self.enforce_csrf(request)
        return user, None

    def enforce_csrf(self, request: Request) -> None:
        failure = session_csrf_failure(request._request)
        if failure is not None:
            raise exceptions.PermissionDenied(failure.detail, code=failure.code)
