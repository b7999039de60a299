"""App sessions: what a mobile or desktop app holds instead of a cookie.

The app sends ``X-Session-Token: <token>``; the session's contents live in a
:class:`~appframework.auth.models.UserSession` row (``kind="app"``) found by the token's
SHA-256, so the token alone is the credential, it never rides in a cookie, and deleting
the row (logout, "end this session", "log out everywhere") ends it. It is a Django
session store, so ``login()``, the second-factor challenge and the passkey ceremonies
work on it exactly as on a cookie session; a new token (at sign-in, which cycles the
key) is handed back in the ``X-Session-Token`` response header.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.base import CreateError, SessionBase, UpdateError
from django.db import IntegrityError, router, transaction
from django.utils import timezone

__all__ = [
    "SESSION_TOKEN_HEADER",
    "TOKEN_PREFIX",
    "AppSessionStore",
    "token_digest",
]

SESSION_TOKEN_HEADER = "X-Session-Token"
#: Recognisable in logs and by secret scanners.
TOKEN_PREFIX = "afs_"


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _rows() -> Any:
    from ..auth.models import UserSession

    return UserSession.objects.filter(kind=UserSession.APP)


class AppSessionStore(SessionBase):
    """A session store keyed by the app's token (``session_key`` is the token itself;
    only its digest is stored). ``client_ip`` and ``user_agent`` are recorded on the
    row for the sessions list."""

    def __init__(
        self, session_key: str | None = None, *, client_ip: str | None = None, user_agent: str = ""
    ) -> None:
        super().__init__(session_key)
        self.client_ip = client_ip
        self.user_agent = user_agent[:200]

    def _validate_session_key(self, key: str | None) -> bool:
        return (
            bool(key) and isinstance(key, str) and key.startswith(TOKEN_PREFIX) and len(key) < 100
        )

    def _get_new_session_key(self) -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    def load(self) -> dict[str, Any]:
        key = self.session_key
        row = None
        if key is not None:
            row = _rows().filter(key=token_digest(key), expires_at__gt=timezone.now()).first()
        if row is None:
            self._session_key = None
            return {}
        data: dict[str, Any] = dict(row.data)
        return data

    def exists(self, session_key: str) -> bool:
        return bool(_rows().filter(key=token_digest(session_key)).exists())

    def create(self) -> None:
        while True:
            self._session_key = self._get_new_session_key()
            try:
                self.save(must_create=True)
            except CreateError:
                continue
            self.modified = True
            return

    def save(self, must_create: bool = False) -> None:
        from ..auth.models import UserSession

        if self.session_key is None:
            return self.create()
        data = self._get_session(no_load=must_create)  # type: ignore[attr-defined]
        expires = timezone.now() + timedelta(seconds=self.get_expiry_age())
        user_id = data.get("_auth_user_id")
        fields = {
            "data": data,
            "expires_at": expires,
            "user_id": user_id,
            "last_seen_at": timezone.now(),
        }
        digest = token_digest(self.session_key)
        using = router.db_for_write(UserSession)
        if must_create:
            try:
                with transaction.atomic(using=using):
                    UserSession.objects.using(using).create(
                        kind=UserSession.APP,
                        key=digest,
                        client_ip=self.client_ip,
                        user_agent=self.user_agent,
                        **fields,
                    )
            except IntegrityError:
                raise CreateError from None
            return None
        updated = _rows().using(using).filter(key=digest).update(**fields)
        if not updated:
            # Ended meanwhile (logout elsewhere, "end this session"): not brought back.
            raise UpdateError
        return None

    def delete(self, session_key: str | None = None) -> None:
        key = self.session_key if session_key is None else session_key
        if key is not None:
            _rows().filter(key=token_digest(key)).delete()

    @classmethod
    def clear_expired(cls) -> None:
        _rows().filter(expires_at__lte=timezone.now()).delete()

    def get_expiry_age(self, **kwargs: Any) -> int:
        # Apps keep their sessions as long as a browser keeps its cookie session.
        return int(super().get_expiry_age(**kwargs) or settings.SESSION_COOKIE_AGE)
