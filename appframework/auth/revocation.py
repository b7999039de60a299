"""Server-side memory of what was ended early: sessions logged out, tokens revoked.

Signed cookies and tokens are stateless, so a copy kept by an attacker (or a browser
extension, or a log file) would stay valid until it expires. Each logged-in session
carries a random nonce (renewed at every login); ending the session records that nonce
in the cache until the cookie would have expired anyway. Tokens carry their own id and
the nonce of the session that issued them.

The record lives where ``APPFRAMEWORK["AUTH"]["REVOCATION_CACHE"]`` says: by default
(``AUTO``) a store every process shares (appframework.stores); an alias named there must
be shared too when more than one process serves the site, or the record only holds in
the process that wrote it (docs/caveats.md).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest

from ..conf import app_settings, derived_setting
from ..security.tokens import NONCE_SESSION_KEY, rotate_nonce
from ..stores import shared_store

__all__ = [
    "PREVIOUS_NONCES_SESSION_KEY",
    "aany_set",
    "ais_session_ended",
    "any_set",
    "arevoke_session",
    "arevoke_session_tokens",
    "asession_nonces",
    "is_session_ended",
    "renew_nonce",
    "revocation_cache",
    "revocation_in_memory",
    "revoke_session",
    "revoke_session_tokens",
    "revoke_token_id",
    "revoked_token_keys",
    "session_nonces",
]

_PREFIX = "appframework:revoked"
#: Nonces this session had before a re-login of the same user (newest last, bounded).
PREVIOUS_NONCES_SESSION_KEY = "_appframework_previous_nonces"
_KEEP_PREVIOUS = 8


def revocation_cache() -> BaseCache:
    return shared_store(app_settings.AUTH.REVOCATION_CACHE)


def ended_session_key(nonce: str) -> str:
    return f"{_PREFIX}:session:{nonce}"


def _session_tokens_key(nonce: str) -> str:
    return f"{_PREFIX}:session-tokens:{nonce}"


def token_key(token_id: str) -> str:
    return f"{_PREFIX}:token:{token_id}"


def _session_lifetime() -> int:
    return int(settings.SESSION_COOKIE_AGE)


def _token_lifetime() -> int:
    return int(app_settings.AUTH.API_TOKEN_EXPIRES_IN)


@derived_setting
def revocation_in_memory() -> bool:
    """True when reading the record costs no I/O (locmem), so async code may read it
    on the event loop; any other backend is read with the cache's async API or in a
    worker thread."""
    return isinstance(revocation_cache(), LocMemCache)


def revoke_session(nonce: str) -> None:
    """The session with this nonce is over: any copy of its cookie is anonymous."""
    revocation_cache().set(ended_session_key(nonce), True, _session_lifetime())


async def arevoke_session(nonce: str) -> None:
    await revocation_cache().aset(ended_session_key(nonce), True, _session_lifetime())


def is_session_ended(nonce: str) -> bool:
    return bool(revocation_cache().get(ended_session_key(nonce)))


async def ais_session_ended(nonce: str) -> bool:
    return bool(await revocation_cache().aget(ended_session_key(nonce)))


def revoke_session_tokens(*nonces: str) -> None:
    """Every API token issued from the sessions with these nonces stops working (one
    cache write for all of them)."""
    if nonces:
        revocation_cache().set_many(
            {_session_tokens_key(n): True for n in nonces}, _token_lifetime()
        )


async def arevoke_session_tokens(*nonces: str) -> None:
    if nonces:
        await revocation_cache().aset_many(
            {_session_tokens_key(n): True for n in nonces}, _token_lifetime()
        )


def revoke_token_id(token_id: str) -> None:
    revocation_cache().set(token_key(token_id), True, _token_lifetime())


def revoked_token_keys(token_id: str | None, session_nonce: str | None) -> list[str]:
    """The cache keys whose presence means a token with these ids is revoked."""
    keys = []
    if token_id:
        keys.append(token_key(token_id))
    if session_nonce:
        keys.append(_session_tokens_key(session_nonce))
    return keys


def any_set(cache: BaseCache, keys: list[str]) -> bool:
    found: dict[str, Any] = cache.get_many(keys) if keys else {}
    return any(found.values())


async def aany_set(cache: BaseCache, keys: list[str]) -> bool:
    found: dict[str, Any] = await cache.aget_many(keys) if keys else {}
    return any(found.values())


def _nonces(current: Any, previous: Any) -> list[str]:
    return [n for n in [*(previous or []), current] if isinstance(n, str) and n]


def session_nonces(session: Any) -> list[str]:
    """The session's nonce and those it had before a re-login: every identity under
    which it could have handed out cookies and tokens."""
    if session is None:
        return []
    return _nonces(session.get(NONCE_SESSION_KEY), session.get(PREVIOUS_NONCES_SESSION_KEY))


async def asession_nonces(session: Any) -> list[str]:
    if session is None:
        return []
    return _nonces(
        await session.aget(NONCE_SESSION_KEY), await session.aget(PREVIOUS_NONCES_SESSION_KEY)
    )


def renew_nonce(request: HttpRequest) -> None:
    """At login: a new nonce (new CSRF tokens). A re-login of the same user keeps the
    session (Django cycles its key instead of flushing it), so the old nonce is ended
    here — a copy of the cookie made before stops working — and remembered, so that a
    later ``logout(revoke_tokens=True)`` also reaches tokens issued under it."""
    session = getattr(request, "session", None)
    old = session.get(NONCE_SESSION_KEY) if session is not None else None
    rotate_nonce(request)
    if session is None or not old:
        return
    revoke_session(old)
    previous = list(session.get(PREVIOUS_NONCES_SESSION_KEY) or [])[-(_KEEP_PREVIOUS - 1) :]
    session[PREVIOUS_NONCES_SESSION_KEY] = [*previous, old]
