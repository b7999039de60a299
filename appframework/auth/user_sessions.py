"""Sessions a user can see and end (docs/accounts.md#sessions).

Each signed-in session has a :class:`~appframework.auth.models.UserSession` row: a
browser's cookie session gets one at sign-in (keyed by the session's nonce, with the
engine's key when the engine keeps sessions server-side), an app's session *is* one
(:mod:`appframework.headless.app_sessions`). Logout removes the browser's row.

``last_seen_at`` is refreshed at most once every ``AUTH["SESSION_SEEN_INTERVAL"]``
seconds, from the suite's ``SessionMiddleware``: the time of the last refresh is kept in
the session itself, so an anonymous request, or one of a session seen lately, costs no
query. A session signed in before rows existed gets its row at its first refresh.

Ending a browser session records its nonce as ended (the suite's signed-cookie store
then refuses any copy of the cookie) and deletes it from a server-side engine
(database, cache, cached_db); ending an app session deletes its row, so its token is
dead. Either way :data:`appframework.events.session_ended` is sent.
"""

from __future__ import annotations

import contextlib
import ipaddress
import time
from collections.abc import Iterable
from datetime import timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieStore
from django.db import IntegrityError, router, transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .. import events
from ..conf import app_settings
from ..exceptions import AppFrameworkError, NotFoundException
from ..headless.app_sessions import token_digest
from ..http import is_app_request
from ..security.tokens import NONCE_SESSION_KEY
from .adapter import get_adapter
from .models import UserSession
from .revocation import PREVIOUS_NONCES_SESSION_KEY, is_session_ended, revoke_session

__all__ = [
    "SEEN_SESSION_KEY",
    "CurrentSessionError",
    "current_session_key",
    "end_other_sessions",
    "end_session",
    "end_user_session",
    "forget_other_sessions",
    "forget_sessions",
    "live_sessions",
    "record_session",
    "session_payload",
    "touch_session",
    "unrecord_session",
]

#: Epoch seconds of the session's last ``last_seen_at`` refresh.
SEEN_SESSION_KEY = "_appframework_seen"
_USER_AGENT_LENGTH = 200


def _address(request: HttpRequest) -> str | None:
    raw = get_adapter(request).get_client_ip(request)
    try:
        return str(ipaddress.ip_address(raw)) if raw else None
    except ValueError:  # a proxy header holding something else than an address
        return None


def _expires(session: Any) -> Any:
    return timezone.now() + timedelta(seconds=int(session.get_expiry_age()))


def _engine_key(session: Any) -> str:
    """The engine's key of a session kept server-side; "" for a signed cookie, whose
    "key" is the whole cookie and which nothing server-side can delete."""
    if isinstance(session, SignedCookieStore):
        return ""
    return str(session.session_key or "")


def _browser_session(request: HttpRequest) -> Any | None:
    """The request's cookie session, or None (an app's, or no session middleware)."""
    if is_app_request(request):
        return None
    return getattr(request, "session", None)


# What a sign-in writes into an existing row of its nonce (its creation time stays).
_RECORDED_FIELDS = (
    "kind",
    "user_id",
    "session_key",
    "client_ip",
    "user_agent",
    "expires_at",
    "last_seen_at",
)


def record_session(request: HttpRequest, user: Any) -> None:
    """At sign-in (``user_logged_in``): the browser session's row. An app session has
    its row already. A re-login in the same session replaces the row of its old nonce."""
    session = _browser_session(request)
    nonce = session.get(NONCE_SESSION_KEY) if session is not None else None
    if session is None or not nonce:
        return
    previous = [n for n in session.get(PREVIOUS_NONCES_SESSION_KEY) or [] if isinstance(n, str)]
    if previous:
        UserSession.objects.filter(kind=UserSession.BROWSER, key__in=previous).delete()
    row = UserSession(
        key=nonce,
        kind=UserSession.BROWSER,
        user_id=user.pk,
        session_key=_engine_key(session),
        client_ip=_address(request),
        user_agent=request.headers.get("User-Agent", "")[:_USER_AGENT_LENGTH],
        expires_at=_expires(session),
        last_seen_at=timezone.now(),
    )
    # One INSERT ... ON CONFLICT DO UPDATE: a sign-in pays no read first.
    UserSession.objects.bulk_create(
        [row],
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=[*_RECORDED_FIELDS],
    )
    session[SEEN_SESSION_KEY] = int(time.time())


def unrecord_session(request: HttpRequest) -> None:
    """At logout (``user_logged_out``, before the session is flushed): its row goes."""
    session = _browser_session(request)
    nonce = session.get(NONCE_SESSION_KEY) if session is not None else None
    if nonce:
        UserSession.objects.filter(kind=UserSession.BROWSER, key=nonce).delete()


def _server_side_ended(session: Any) -> bool:
    """For an engine that keeps sessions server-side: this one is gone from it."""
    key = _engine_key(session)
    return bool(key) and not session.exists(key)


def touch_session(request: HttpRequest) -> None:
    """Refresh the request's session row when the last refresh is older than
    ``AUTH["SESSION_SEEN_INTERVAL"]``. Called by the suite's ``SessionMiddleware`` as
    the response goes out; without a signed-in user, or within the interval, it reads
    only the (already loaded) session."""
    session = getattr(request, "session", None)
    if session is None or (not session.accessed and session.session_key is None):
        # No session came in and nothing touched one: reading it would mark it
        # accessed, and every such response would then say "Vary: Cookie".
        return
    if SESSION_KEY not in session:
        return
    now = int(time.time())
    seen = session.get(SEEN_SESSION_KEY)
    if isinstance(seen, int) and 0 <= now - seen < app_settings.AUTH.SESSION_SEEN_INTERVAL:
        return
    # The stamp goes into the session: an app's session is saved with it, and its row
    # (which is the app session) gets last_seen_at with that save.
    session[SEEN_SESSION_KEY] = now
    if is_app_request(request):
        return
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or str(user.pk) != str(session.get(SESSION_KEY)):
        # The session's user no longer holds (a password changed elsewhere), or the
        # request's user is not the session's (a bearer token): no row of it here.
        return
    nonce = session.get(NONCE_SESSION_KEY)
    if not nonce:
        return
    fields = {
        "last_seen_at": timezone.now(),
        "expires_at": _expires(session),
        "session_key": _engine_key(session),
    }
    rows = UserSession.objects.filter(kind=UserSession.BROWSER, key=nonce, user_id=user.pk)
    if rows.update(**fields):
        return
    # No row: a session signed in before rows were kept, or one ended during this very
    # request (then it must not come back).
    if is_session_ended(nonce) or _server_side_ended(session):
        return
    # Two requests of the session may get here at once: the second finds the row made.
    with (
        contextlib.suppress(IntegrityError),
        transaction.atomic(using=router.db_for_write(UserSession)),
    ):
        UserSession.objects.create(
            kind=UserSession.BROWSER,
            key=nonce,
            user_id=user.pk,
            client_ip=_address(request),
            user_agent=request.headers.get("User-Agent", "")[:_USER_AGENT_LENGTH],
            **fields,
        )


def current_session_key(request: HttpRequest) -> str | None:
    """The ``key`` of the request's own row: the nonce of a cookie session, the token
    digest of an app's."""
    session = getattr(request, "session", None)
    if session is None:
        return None
    if is_app_request(request):
        token = session.session_key
        return token_digest(token) if token else None
    nonce = session.get(NONCE_SESSION_KEY)
    return nonce if isinstance(nonce, str) and nonce else None


def live_sessions(user: Any) -> list[UserSession]:
    """The user's sessions that have not expired, most recently seen first; expired rows
    of the user are deleted on the way."""
    now = timezone.now()
    UserSession.objects.filter(user=user, expires_at__lte=now).delete()
    return list(UserSession.objects.filter(user=user, expires_at__gt=now))


def end_session(row: UserSession, request: HttpRequest | None = None) -> None:
    """End the session of ``row`` wherever it is held, then send ``session_ended``."""
    if row.kind == UserSession.BROWSER:
        revoke_session(row.key)
        if row.session_key:
            engine = import_module(settings.SESSION_ENGINE)
            engine.SessionStore(row.session_key).delete()
    user = row.user
    row.delete()
    if user is not None:
        events.session_ended.send(
            sender=type(user), user=user, request=request, session=row, kind=row.kind
        )


class CurrentSessionError(AppFrameworkError):
    """409 ``current_session``: the session asked to end is the request's own; logging
    out ends it (and answers the client accordingly)."""

    status_code = 409
    title = _("Conflict")
    default_detail = _("This is the session you are using: log out to end it.")
    default_code = "current_session"


def end_user_session(request: HttpRequest, user: Any, pk: int) -> None:
    """End ``user``'s session ``pk``: 404 when the user has no such live session, 409
    when it is the request's own."""
    row = UserSession.objects.filter(user=user, pk=pk, expires_at__gt=timezone.now()).first()
    if row is None:
        raise NotFoundException(_("No such session."), code="not_found")
    if row.key == current_session_key(request):
        raise CurrentSessionError()
    end_session(row, request)


def _others(user: Any, request: HttpRequest) -> Iterable[UserSession]:
    current = current_session_key(request)
    rows = UserSession.objects.filter(user=user).select_related("user")
    return rows.exclude(key=current) if current else rows


def end_other_sessions(request: HttpRequest, user: Any) -> int:
    """End every session of ``user`` but the request's own; how many were live."""
    now = timezone.now()
    ended = 0
    for row in _others(user, request):
        if row.expires_at > now:
            end_session(row, request)
            ended += 1
        else:
            row.delete()
    return ended


def forget_other_sessions(request: HttpRequest, user: Any) -> None:
    """Drop the rows of sessions that already ended by other means (a password change
    ends every other session through the session hash): the list stays true. That change
    also gave this session a new engine key, which its row now holds."""
    UserSession.objects.filter(pk__in=[row.pk for row in _others(user, request)]).delete()
    session = _browser_session(request)
    current = current_session_key(request)
    if session is not None and current:
        UserSession.objects.filter(kind=UserSession.BROWSER, key=current).update(
            session_key=_engine_key(session)
        )


def forget_sessions(user: Any) -> None:
    """Drop every row of ``user`` (logout everywhere, a password reset: all ended)."""
    UserSession.objects.filter(user=user).delete()


def session_payload(row: UserSession, current: str | None) -> dict[str, Any]:
    """A session as the JSON API and the page show it."""
    return {
        "id": row.pk,
        "kind": row.kind,
        "created_at": row.created_at.isoformat(),
        "last_seen_at": row.last_seen_at.isoformat(),
        "client_ip": row.client_ip,
        "user_agent": row.user_agent,
        "current": row.key == current,
    }
