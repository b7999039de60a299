"""``SESSION_ENGINE = "appframework.auth.session_store"``: Django's signed-cookie
sessions, plus logout that holds for copies of the cookie.

Everything is still in the cookie; the only server-side state is the short record of
ended sessions (:mod:`appframework.auth.revocation`). ``flush()`` — what Django's
``logout()`` and a login as another user call — records the session's nonce; ``load()``
treats a cookie whose nonce is recorded like a bad signature: an empty, anonymous
session.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieStore

from ..security.tokens import NONCE_SESSION_KEY
from .revocation import (
    ais_session_ended,
    arevoke_session,
    is_session_ended,
    revocation_in_memory,
    revoke_session,
)

__all__ = ["SessionStore"]


class SessionStore(SignedCookieStore):
    @property
    def loads_in_memory(self) -> bool:
        """Loading reads the record of ended sessions: from memory only when that cache
        is locmem (async middleware then need not hop to a thread)."""
        return revocation_in_memory()

    def _ended(self) -> dict[str, Any]:
        self.create()  # as for a bad signature: the client gets a fresh, empty cookie
        return {}

    def load(self) -> dict[str, Any]:
        data: dict[str, Any] = super().load()
        nonce = data.get(NONCE_SESSION_KEY)
        return self._ended() if nonce and is_session_ended(nonce) else data

    async def aload(self) -> dict[str, Any]:
        # The record may live on a cache that must not be read from the event loop
        # synchronously (the database cache raises, Redis blocks): use its async API.
        data: dict[str, Any] = super().load()
        nonce = data.get(NONCE_SESSION_KEY)
        return self._ended() if nonce and await ais_session_ended(nonce) else data

    def flush(self) -> None:
        nonce = self.get(NONCE_SESSION_KEY)
        if nonce:
            revoke_session(nonce)
        super().flush()

    async def aflush(self) -> None:
        nonce = await self.aget(NONCE_SESSION_KEY)
        if nonce:
            await arevoke_session(nonce)
        await super().aflush()
