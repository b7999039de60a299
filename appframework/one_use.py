"""One-use values bound to the session that asked for them: OAuth states, passkey
ceremony challenges.

A pending value lives in the session, so only the browser that asked can spend it. The
session alone cannot make it one-use: with the signed-cookie session it lives in a
cookie, and a client that kept the cookie from before the value was spent can present it
again. So a spent value is also recorded in a store every process shares until it would have
expired anyway (appframework.stores); the record is written with ``cache.add``, which
only one of two racing requests can win.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest

from .stores import shared_store

__all__ = ["OneUseStore", "Refused"]


class Refused(Exception):
    """Why a value was refused: ``"replayed"`` (spent already, here or by a kept copy of
    the cookie) or ``"unknown"`` (never issued to this session, for something else,
    expired, or malformed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OneUseStore:
    """Values kept under ``session_key``; ``ttl()`` and ``cache_alias()`` (a setting's
    value: an alias or ``AUTO``) are read on each call, so ``override_settings``
    applies; ``clock`` is read the same way. The newest ``max_pending`` stay pending
    (sign-ins started in other tabs keep working)."""

    def __init__(
        self,
        session_key: str,
        spent_prefix: str,
        *,
        ttl: Callable[[], int],
        cache_alias: Callable[[], Any],
        missing_session: str,
        clock: Callable[[], float] = time.time,
        max_pending: int = 10,
        max_length: int = 128,
    ) -> None:
        self.session_key = session_key
        self.spent_prefix = spent_prefix
        self.ttl = ttl
        self.cache_alias = cache_alias
        self.missing_session = missing_session
        self.clock = clock
        self.max_pending = max_pending
        self.max_length = max_length

    def session(self, request: HttpRequest) -> Any:
        session = getattr(request, "session", None)
        if session is None:
            raise RuntimeError(self.missing_session)
        return session

    def pending(self, session: Any, now: float) -> dict[str, dict[str, Any]]:
        stored = session.get(self.session_key)
        if not isinstance(stored, dict):
            return {}
        ttl = self.ttl()
        return {
            value: entry
            for value, entry in stored.items()
            if isinstance(entry, dict) and float(entry.get("t", 0)) + ttl > now
        }

    def remember(self, request: HttpRequest, value: str, entry: dict[str, Any]) -> str:
        """Keep ``value`` pending with ``entry`` (its start time is added as ``t``)."""
        session = self.session(request)
        now = self.clock()
        pending = self.pending(session, now)
        pending[value] = {**entry, "t": now}
        session[self.session_key] = dict(list(pending.items())[-self.max_pending :])
        return value

    def _spent_key(self, value: str) -> str:
        return self.spent_prefix + hashlib.sha256(value.encode()).hexdigest()

    def consume(
        self,
        request: HttpRequest,
        value: str,
        accept: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """Spend ``value`` and return its entry; :class:`Refused` when it is not pending
        in this session, expired, not what ``accept`` wants, or spent already. A value
        found pending is spent even when refused: it is never tried twice."""
        session = self.session(request)
        now = self.clock()
        stored = session.get(self.session_key)
        entry = stored.pop(value, None) if isinstance(stored, dict) else None
        cache = shared_store(self.cache_alias())
        too_long = len(value) > self.max_length
        if entry is None and not too_long and cache.get(self._spent_key(value)):
            # Gone from this session because it was spent here: say so, not "unknown".
            raise Refused("replayed")
        if entry is not None:
            session[self.session_key] = stored
        if (
            too_long
            or not isinstance(entry, dict)
            or float(entry.get("t", 0)) + self.ttl() <= now
            or (accept is not None and not accept(entry))
        ):
            raise Refused("unknown")
        if not cache.add(self._spent_key(value), 1, timeout=self.ttl()):
            raise Refused("replayed")
        return entry
