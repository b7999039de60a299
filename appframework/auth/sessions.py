"""Cookie sessions over ``django.contrib.auth`` and signed-cookie sessions.

Naming rule for the two colours (docs/decisions.md): an operation whose primary form is
async (``current_user``, ``require_auth``) keeps its name as a coroutine function and
has a sync twin ``<name>_sync``; an operation whose primary form is sync (``login``,
``logout``) keeps its name and has Django's ``a<name>`` async twin.

After any of ``login``/``alogin``/``logout``/``alogout`` every reader of the user in the
same request — ``current_user``, ``current_user_sync``, ``request.user`` and
``await request.auser()`` — answers the same.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import auth as django_auth
from django.http import HttpRequest

from ..backends import backend_path
from ..conf import app_settings
from ..exceptions import UnauthorizedException
from ..http import has_authorization, set_request_user
from .manager import AuthManager
from .revocation import (
    arevoke_session_tokens,
    asession_nonces,
    revoke_session_tokens,
    session_nonces,
)

__all__ = [
    "alogin",
    "alogout",
    "current_user",
    "current_user_sync",
    "login",
    "logout",
    "require_auth",
    "require_auth_sync",
    "session_ignored",
]


def session_ignored(request: HttpRequest) -> bool:
    return has_authorization(request)


def _backend_path(user: Any) -> str:
    """The backend recorded in the session: the user's own, else the first AuthManager."""
    explicit = getattr(user, "backend", None)
    if isinstance(explicit, str):
        return explicit
    return backend_path(AuthManager) or str(settings.AUTHENTICATION_BACKENDS[0])


def login(request: HttpRequest, user: Any) -> None:
    """anonymous → authenticated. Django's ``login``: a fresh cookie value (no fixation),
    the user id and the session hash (password + session version) in the cookie."""
    django_auth.login(request, user, backend=_backend_path(user))
    set_request_user(request, user)


async def alogin(request: HttpRequest, user: Any) -> None:
    await django_auth.alogin(request, user, backend=_backend_path(user))
    set_request_user(request, user)


def _should_revoke(revoke_tokens: bool | None) -> bool:
    if revoke_tokens is None:
        return bool(app_settings.AUTH.REVOKE_TOKENS_ON_LOGOUT)
    return revoke_tokens


def _revoke_tokens(request: HttpRequest, revoke_tokens: bool | None) -> None:
    if _should_revoke(revoke_tokens):
        revoke_session_tokens(*session_nonces(getattr(request, "session", None)))


async def _arevoke_tokens(request: HttpRequest, revoke_tokens: bool | None) -> None:
    if _should_revoke(revoke_tokens):
        await arevoke_session_tokens(*await asession_nonces(getattr(request, "session", None)))


def _anonymous() -> Any:
    from django.contrib.auth.models import AnonymousUser

    return AnonymousUser()


def logout(
    request: HttpRequest, *, everywhere: bool = False, revoke_tokens: bool | None = None
) -> None:
    """authenticated → anonymous. The cookie it ends stops working even where a copy
    was kept (with the suite's session engine).

    ``revoke_tokens=True`` (default: ``AUTH["REVOKE_TOKENS_ON_LOGOUT"]``) also revokes
    the API tokens issued from this session; ``everywhere=True`` invalidates every
    session cookie and signed API token of the user (needs the session-version column),
    revokes its personal access tokens and forgets its trusted browsers: whoever else
    held the account keeps nothing that still works.
    """
    if everywhere:
        user = current_user_sync(request)
        if user is not None:
            from .access_tokens import revoke_access_tokens
            from .trusted_browsers import forget_browsers
            from .user_sessions import forget_sessions

            user.invalidate_sessions()
            revoke_access_tokens(user, request=request)
            forget_browsers(user)
            forget_sessions(user)
    _revoke_tokens(request, revoke_tokens)
    django_auth.logout(request)
    set_request_user(request, _anonymous())


async def alogout(
    request: HttpRequest, *, everywhere: bool = False, revoke_tokens: bool | None = None
) -> None:
    if everywhere:
        user = await current_user(request)
        if user is not None:
            from asgiref.sync import sync_to_async

            from .access_tokens import revoke_access_tokens
            from .trusted_browsers import forget_browsers
            from .user_sessions import forget_sessions

            await user.ainvalidate_sessions()
            await sync_to_async(revoke_access_tokens)(user, request=request)
            await sync_to_async(forget_browsers)(user)
            await sync_to_async(forget_sessions)(user)
    await _arevoke_tokens(request, revoke_tokens)
    await django_auth.alogout(request)
    set_request_user(request, _anonymous())


def _user_or_none(user: Any) -> Any | None:
    return user if user is not None and user.is_authenticated else None


def current_user_sync(request: HttpRequest) -> Any | None:
    """The session's user or None; None too when the request carries ``Authorization``."""
    if session_ignored(request):
        return None
    user = getattr(request, "user", None)
    if user is None:
        user = django_auth.get_user(request)
    return _user_or_none(user)


async def current_user(request: HttpRequest) -> Any | None:
    if session_ignored(request):
        return None
    auser = getattr(request, "auser", None)
    user = await auser() if auser is not None else await django_auth.aget_user(request)
    return _user_or_none(user)


def require_auth_sync(request: HttpRequest) -> Any:
    user = current_user_sync(request)
    if user is None:
        raise UnauthorizedException()
    return user


async def require_auth(request: HttpRequest) -> Any:
    user = await current_user(request)
    if user is None:
        raise UnauthorizedException()
    return user
