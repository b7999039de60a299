"""DRF authentication classes over the suite's bearer tokens and sessions.

Import them from here: ``appframework.contrib.drf.SessionAuthentication`` is a subclass of
``rest_framework.authentication.SessionAuthentication`` of the same name, with the suite's
CSRF rules (docs/drf.md).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ...auth.scopes import insufficient_scope, method_scope, missing_scope
from ...auth.sessions import current_user_sync
from ...auth.tokens import (
    ApiToken,
    bearer_token,
    bearer_unauthorized,
    current_api_token_sync,
    token_manager,
)
from ...http import has_authorization, is_app_request
from ...security.csrf import session_csrf_failure

__all__ = ["BearerTokenAuthentication", "InsufficientScope", "SessionAuthentication", "view_scopes"]


def view_scopes(request: Request, view: Any) -> tuple[str, ...]:
    """What a token limited to scopes needs for ``view``: its ``required_scopes``, else
    the method's scope (``read`` for a safe method, ``write`` for the others)."""
    named = getattr(view, "required_scopes", None)
    if named:
        return tuple(named)
    return (method_scope(request.method),)


class InsufficientScope(exceptions.PermissionDenied):
    """403 ``insufficient_scope``: the bearer token is limited to scopes without one the
    view needs. ``auth_header`` is RFC 6750's challenge (the suite's exception handler
    sends it as ``WWW-Authenticate``)."""

    default_code = "insufficient_scope"

    def __init__(self, scope: str) -> None:
        error = insufficient_scope(scope)
        super().__init__(error.detail, code=error.code)
        self.auth_header = error.www_authenticate


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` with the suite's API tokens (expiry, revocation,
    password change and "log out everywhere" included), in the shape of DRF's
    ``TokenAuthentication``: ``keyword`` names the scheme (``"Bearer"``; a subclass may
    change it), ``request.user`` is the token's user and ``request.auth`` the verified
    token (:class:`~appframework.auth.tokens.ApiToken`: ``key``, ``token_id``,
    ``created``, ``expires``; ``str()`` gives the key).

    A request with another scheme, or none, is left to the next class. A header with
    this scheme and no token, or a token with spaces, is a 401 as in DRF; a bad,
    expired or revoked token is a 401 with ``WWW-Authenticate: Bearer
    error="invalid_token"``. Its ``authenticate_header`` makes DRF answer 401, not 403,
    to anonymous requests when it is listed first.

    A personal access token limited to scopes needs the view's ``required_scopes`` (all
    of them), or, when the view names none, ``read`` for a safe method and ``write`` for
    the others: 403 ``insufficient_scope`` with ``WWW-Authenticate: Bearer
    error="insufficient_scope"`` otherwise (:class:`InsufficientScope`).
    """

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) == 1:
            raise exceptions.AuthenticationFailed(
                _("Invalid token header. No credentials provided."), code="invalid_token"
            )
        if len(parts) > 2:
            raise exceptions.AuthenticationFailed(
                _("Invalid token header. Token string should not contain spaces."),
                code="invalid_token",
            )
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(
                _("Invalid token header. Token string should not contain invalid characters."),
                code="invalid_token",
            ) from None
        django_request = request._request
        if bearer_token(django_request) == key:
            # The middleware (a tenant resolver, say) may have verified it already.
            verified = current_api_token_sync(django_request)
            if verified is None:
                raise self._failed(django_request)
        else:
            verified = self.authenticate_credentials(key)[1]
        refused = missing_scope(verified, view_scopes(request, request.parser_context.get("view")))
        if refused is not None:
            raise InsufficientScope(refused)
        return verified.user, verified

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        """The user and the verified token for ``key``; 401 ``invalid_token`` otherwise."""
        verified = token_manager().authenticate_sync(key)
        if verified is None:
            raise exceptions.AuthenticationFailed(
                _("The bearer token is missing, malformed, expired or revoked."),
                code="invalid_token",
            )
        return verified.user, verified

    @staticmethod
    def _failed(request: Any) -> exceptions.AuthenticationFailed:
        error = bearer_unauthorized(request)
        return exceptions.AuthenticationFailed(error.detail, code=error.code)

    def authenticate_header(self, request: Request) -> str:
        # RFC 6750: a request that sent a credential learns it was the token at fault.
        if has_authorization(request._request):
            return f'{self.keyword} error="invalid_token"'
        return self.keyword


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication under the suite's CSRF rules: ``Origin`` plus a
    token of *this* session (signed double-submit) in ``X-CSRF-Token``, Django's
    ``X-CSRFToken`` or the form field. A request carrying ``Authorization`` is judged by
    that credential alone; a user whose two-factor challenge is still pending is not
    signed in, so gets nothing from the session. An app's session (``X-Session-Token``,
    with the headless ``SessionMiddleware``) counts too, without a CSRF check: no other
    site can send that header.
    """

    def authenticate(self, request: Request) -> tuple[Any, None] | None:
        django_request = request._request
        if has_authorization(django_request):
            return None
        user = current_user_sync(django_request)
        if user is None:
            return None
        if not is_app_request(django_request):
            # An app's session rides in X-Session-Token, which no other site can send.
            self.enforce_csrf(request)
        return user, None

    def enforce_csrf(self, request: Request) -> None:
        failure = session_csrf_failure(request._request)
        if failure is not None:
            raise exceptions.PermissionDenied(failure.detail, code=failure.code)
