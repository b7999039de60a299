"""``appframework.headless.SessionMiddleware``: Django's ``SessionMiddleware`` that also
serves app sessions. Put it in place of ``django.contrib.sessions.middleware.SessionMiddleware``.

A request with an ``X-Session-Token`` header (empty for an app that has none yet) is an
app's: its cookies are ignored — the token is the only credential, so no cross-site
request can carry it and CSRF does not apply — and ``request.session`` is the
:class:`~appframework.headless.app_sessions.AppSessionStore` of that token. Every other
request gets the configured cookie session, as before.

Both kinds refresh their row's "last seen" (:func:`appframework.auth.user_sessions.touch_session`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.exceptions import SessionInterrupted
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from ..auth.user_sessions import touch_session
from ..http import APP_SESSION_ATTR, client_ip, header_meta_key, is_app_request
from .app_sessions import SESSION_TOKEN_HEADER, AppSessionStore

__all__ = ["SessionMiddleware", "is_app_request", "use_app_session"]
_META = header_meta_key(SESSION_TOKEN_HEADER)


def use_app_session(request: HttpRequest, token: str | None) -> None:
    """Serve ``request`` with the app session of ``token`` (None: a new one), its
    cookies ignored."""
    request.COOKIES = {}
    request.session = AppSessionStore(
        token or None,
        client_ip=client_ip(request),
        user_agent=request.headers.get("User-Agent", ""),
    )
    setattr(request, APP_SESSION_ATTR, token or None)


class SessionMiddleware(DjangoSessionMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if _META in request.META:
            use_app_session(request, request.META[_META].strip())
            return
        super().process_request(request)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if response.status_code < 500 and hasattr(request, "session"):
            # Before the session is saved: a refresh puts its time into the session.
            touch_session(request)
        if not is_app_request(request):
            return super().process_response(request, response)
        session: Any = request.session
        token_in = getattr(request, APP_SESSION_ATTR)
        if session.modified and not session.is_empty() and response.status_code < 500:
            try:
                session.save()
            except UpdateError:
                raise SessionInterrupted(
                    "The app session was ended before the request completed."
                ) from None
        token_out = None if session.is_empty() else session.session_key
        if token_out != token_in:
            # A new session (sign-in cycles the key) or none any more (logout): the app
            # keeps what this header says.
            response[SESSION_TOKEN_HEADER] = token_out or ""
        patch_vary_headers(response, (SESSION_TOKEN_HEADER,))
        return response
