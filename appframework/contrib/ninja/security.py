"""django-ninja authentication over the suite's sessions and bearer tokens."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer

from ...auth.scopes import insufficient_scope, method_scope, missing_scope
from ...auth.sessions import current_user_sync
from ...auth.tokens import bearer_token, bearer_unauthorized, current_api_token_sync
from ...http import has_authorization, is_app_request
from ...security.csrf import session_csrf_failure

__all__ = ["BEARER_EXPECTED", "BearerAuth", "SessionAuth"]

#: Request attribute set when an operation's auth included ``BearerAuth``.
BEARER_EXPECTED = "_appframework_bearer_expected"


class SessionAuth(APIKeyCookie):
    """ninja's session auth under the suite's CSRF rules: for a signed-in session, an
    unsafe request must come from this site (``Origin``) and echo a token of this
    session in ``X-CSRF-Token``, Django's ``X-CSRFToken`` or the form field; otherwise
    403 (``code`` names the reason). ``SessionAuth(csrf=False)`` skips that check, as
    ninja's own class does. A request carrying ``Authorization`` is judged by that
    credential alone; a pending two-factor challenge is not a signed-in user. An app's
    session (``X-Session-Token``, with the headless ``SessionMiddleware``) counts too,
    without the CSRF check.
    """

    param_name: str = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        # ninja's version runs Django's CSRF check here, for every request; the suite's
        # runs in authenticate(), once the session is known to carry a user.
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        if has_authorization(request):
            return None
        user = current_user_sync(request)
        if user is None:
            return None
        # An app's session rides in X-Session-Token, which no other site can send.
        csrf = self.csrf and not is_app_request(request)
        if csrf and not getattr(request, "_ninja_csrf_exempt", False):
            failure = session_csrf_failure(request)
            if failure is not None:
                raise failure
        return user


class BearerAuth(HttpBearer):
    """``Authorization: Bearer <token>`` with the suite's API tokens (expiry and
    revocation included); ``request.auth`` is the user. A bad, expired or revoked
    token is a 401 with ``WWW-Authenticate: Bearer error="invalid_token"``.

    A personal access token limited to scopes needs every one of ``scopes``, or, when
    none are named, ``read`` for a safe method and ``write`` for the others: 403
    ``insufficient_scope`` otherwise. ``BearerAuth(scopes=["billing"])`` asks an
    operation's own."""

    def __init__(self, *, scopes: Iterable[str] = ()) -> None:
        self.scopes = tuple(scopes)
        super().__init__()

    def __call__(self, request: HttpRequest) -> Any | None:
        # Remembered for the 401 when no auth of the operation succeeds: bearer auth
        # was expected, so the answer carries WWW-Authenticate: Bearer.
        setattr(request, BEARER_EXPECTED, True)
        token = bearer_token(request)
        return None if token is None else self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        verified = current_api_token_sync(request)
        if verified is None:
            raise bearer_unauthorized(request)
        refused = missing_scope(verified, self.scopes or (method_scope(request.method),))
        if refused is not None:
            raise insufficient_scope(refused)
        return verified.user
