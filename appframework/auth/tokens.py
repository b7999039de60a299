"""Bearer API tokens: ``django.core.signing`` with the app secret, readable payload;
and, beside them, the personal access tokens users make (``afp_...``,
:mod:`appframework.auth.access_tokens`), accepted by the same checks.

The payload is ``{"uid", "h", "jti", "sid"}``: the user id, a fingerprint of the user's
session hash (a password change or "log out everywhere" revokes the token), the token's
own id (``revoke_id``) and, when issued from a logged-in request, the nonce of that
session (``logout(request, revoke_tokens=True)`` revokes it).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth import SESSION_KEY, get_user_model
from django.core import signing
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _

from ..backends import is_active
from ..conf import app_settings
from ..exceptions import UnauthorizedException
from ..http import has_authorization
from ..security.tokens import NONCE_SESSION_KEY
from .revocation import (
    aany_set,
    any_set,
    revocation_cache,
    revoke_token_id,
    revoked_token_keys,
)
from .scopes import insufficient_scope, method_scope, missing_scope

__all__ = [
    "ApiToken",
    "TokenManager",
    "bearer_token",
    "bearer_unauthorized",
    "current_api_token",
    "current_api_token_sync",
    "current_api_user",
    "current_api_user_sync",
    "require_api_auth",
    "require_api_auth_sync",
    "token_manager",
]

_SALT = "appframework.api-token"
# A token is ~100 characters; anything far longer is not ours and is refused before any
# base64 or HMAC work is spent on it.
MAX_TOKEN_LENGTH = 1024
_CACHE_ATTR = "_appframework_api_token"


def bearer_token(request: HttpRequest) -> str | None:
    """The token of ``Authorization: Bearer <token>``, or None for anything else.

    Exactly one space-free token after a case-insensitive ``Bearer`` scheme; oddly spaced,
    empty, oversized or non-ASCII values are refused.
    """
    header = request.META.get("HTTP_AUTHORIZATION")
    if not header or len(header) > MAX_TOKEN_LENGTH + 16:
        return None
    scheme, sep, token = header.strip().partition(" ")
    if not sep or scheme.lower() != "bearer":
        return None
    token = token.strip()
    if not token or not token.isascii() or any(c.isspace() for c in token):
        return None
    return token


class _Payload:
    __slots__ = ("fingerprint", "issued", "session", "token_id", "uid")

    def __init__(
        self,
        uid: Any,
        fingerprint: str,
        token_id: str | None,
        session: str | None,
        issued: datetime | None,
    ):
        self.uid = uid
        self.fingerprint = fingerprint
        self.token_id = token_id
        self.session = session
        self.issued = issued


@dataclass(frozen=True)
class ApiToken:
    """A verified bearer token: what ``request.auth`` holds in DRF (as DRF's own
    ``TokenAuthentication`` puts its ``Token`` there) and ``current_api_token_sync``
    returns. ``str(token)`` is the key as sent."""

    key: str
    user: Any
    #: The id ``TokenManager.revoke_id`` takes; None for a token issued without one
    #: (and for a personal access token).
    token_id: str | None
    created: datetime | None
    expires: datetime | None
    #: The scopes the token is limited to; None: not limited (a signed token, or a
    #: personal access token made without scopes).
    scopes: frozenset[str] | None = None
    #: The :class:`~appframework.auth.models.PersonalAccessToken` row of a personal
    #: access token; None for a signed token.
    access_token: Any = None

    def __str__(self) -> str:
        return self.key

    def has_scope(self, scope: str) -> bool:
        """Whether the token may be used for ``scope``: any scope when it is not limited."""
        return self.scopes is None or scope in self.scopes


def _personal(key: str, found: tuple[Any, Any] | None) -> ApiToken | None:
    if found is None:
        return None
    user, row = found
    scopes = frozenset(row.scopes) if row.scopes else None
    return ApiToken(key, user, None, row.created_at, row.expires_at, scopes, row)


def _issued_at(token: str) -> datetime | None:
    # A TimestampSigner value ends "...:<base62 timestamp>:<signature>".
    try:
        return datetime.fromtimestamp(signing.b62_decode(token.rsplit(":", 2)[-2]), tz=UTC)
    except (IndexError, ValueError, OverflowError, OSError):
        return None


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class TokenManager:
    """``issue(user)`` → signed token; ``verify(token)`` (async) / ``verify_sync``;
    ``revoke(token)`` / ``revoke_id(token_id)``.

    Swappable: ``APPFRAMEWORK["AUTH"]["TOKEN_MANAGER"]`` names the class bound in the
    container (a subclass of this one).
    """

    def _signer(self) -> signing.TimestampSigner:
        return signing.TimestampSigner(salt=_SALT)

    @staticmethod
    def _fingerprint(user: Any) -> str:
        # Changes on password change and on "log out everywhere" (the session hash mixes
        # in both), so those revoke outstanding tokens too.
        getter = getattr(user, "get_session_auth_hash", None)
        return getter()[:16] if getter else ""

    def issue(self, user: Any, *, request: HttpRequest | None = None) -> str:
        """Signed (not encrypted) token carrying the user id; expires after
        ``API_TOKEN_EXPIRES_IN`` seconds. With ``request`` (and ``user`` its logged-in
        user), the token is tied to the request's session, so that
        ``logout(request, revoke_tokens=True)`` ends it."""
        if getattr(user, "pk", None) is None:
            raise ValueError("Cannot issue a token for an unsaved user.")
        payload = {"uid": user.pk, "h": self._fingerprint(user), "jti": secrets.token_hex(8)}
        session = getattr(request, "session", None) if request is not None else None
        # Tied to the session only when it is the session's own user: an admin issuing
        # a token for someone else must not end it by logging out.
        if session is not None and session.get(SESSION_KEY) == str(user.pk):
            nonce = session.get(NONCE_SESSION_KEY)
            if nonce:
                payload["sid"] = nonce
        return self._signer().sign_object(payload)

    def token_id(self, token: str) -> str | None:
        """The id of a valid token (for ``revoke_id``), or None."""
        payload = self._payload(token)
        return payload.token_id if payload is not None else None

    def revoke(self, token: str) -> bool:
        """Revoke this one token; False when it is not a valid token of ours."""
        from .access_tokens import authenticate_access_token, is_access_token, revoke_access_token

        if is_access_token(token):
            found = authenticate_access_token(token)
            if found is None:
                return False
            revoke_access_token(found[0], found[1].pk)
            return True
        token_id = self.token_id(token)
        if token_id is None:
            return False
        self.revoke_id(token_id)
        return True

    def revoke_id(self, token_id: str) -> None:
        """Revoke the token with this id (kept until the token would have expired)."""
        revoke_token_id(token_id)

    def _payload(self, token: object) -> _Payload | None:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        try:
            data = self._signer().unsign_object(
                token, max_age=int(app_settings.AUTH.API_TOKEN_EXPIRES_IN)
            )
        except Exception:
            # BadSignature/SignatureExpired, and any base64/zlib/JSON error on odd input:
            # a token we cannot read is simply not a credential, never a 500.
            return None
        if not isinstance(data, dict) or "uid" not in data:
            return None
        uid, fingerprint = data["uid"], data.get("h", "")
        if not isinstance(uid, int | str) or not isinstance(fingerprint, str):
            return None
        return _Payload(
            uid,
            fingerprint,
            _optional_str(data.get("jti")),
            _optional_str(data.get("sid")),
            _issued_at(token),
        )

    @staticmethod
    def _revoked(payload: _Payload) -> bool:
        keys = revoked_token_keys(payload.token_id, payload.session)
        return any_set(revocation_cache(), keys)

    @staticmethod
    async def _arevoked(payload: _Payload) -> bool:
        keys = revoked_token_keys(payload.token_id, payload.session)
        return await aany_set(revocation_cache(), keys)

    def _accept(self, user: Any, payload: _Payload) -> Any | None:
        if user is None or not is_active(user):
            return None
        fingerprint = payload.fingerprint
        if constant_time_compare(fingerprint, self._fingerprint(user)):
            return user
        # A token issued before a key rotation carries the old key's fingerprint; it
        # stays good while that key is in SECRET_KEY_FALLBACKS, as sessions do.
        fallbacks = getattr(user, "get_session_auth_fallback_hash", None)
        if fallbacks is not None and any(
            constant_time_compare(fingerprint, value[:16]) for value in fallbacks()
        ):
            return user
        return None

    def _api_token(self, token: str, user: Any, payload: _Payload) -> ApiToken | None:
        if self._accept(user, payload) is None:
            return None
        lifetime = timedelta(seconds=int(app_settings.AUTH.API_TOKEN_EXPIRES_IN))
        issued = payload.issued
        return ApiToken(token, user, payload.token_id, issued, issued and issued + lifetime)

    def authenticate_sync(self, token: str) -> ApiToken | None:
        """The verified token (its user, id, creation and expiry), or None. A personal
        access token (``afp_...``) is looked up in the database instead."""
        from .access_tokens import authenticate_access_token, is_access_token

        if is_access_token(token):
            return _personal(token, authenticate_access_token(token))
        payload = self._payload(token)
        if payload is None or self._revoked(payload):
            return None
        model = get_user_model()
        try:
            user = model._default_manager.get(pk=payload.uid)
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return self._api_token(token, user, payload)

    async def authenticate(self, token: str) -> ApiToken | None:
        from .access_tokens import aauthenticate_access_token, is_access_token

        if is_access_token(token):
            return _personal(token, await aauthenticate_access_token(token))
        payload = self._payload(token)
        if payload is None or await self._arevoked(payload):
            return None
        model = get_user_model()
        try:
            user = await model._default_manager.aget(pk=payload.uid)
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return self._api_token(token, user, payload)

    def verify_sync(self, token: str) -> Any | None:
        """The token's user, or None."""
        verified = self.authenticate_sync(token)
        return None if verified is None else verified.user

    async def verify(self, token: str) -> Any | None:
        verified = await self.authenticate(token)
        return None if verified is None else verified.user


def token_manager() -> TokenManager:
    """The token manager bound in the container (``AUTH["TOKEN_MANAGER"]``)."""
    from ..container import container

    manager: TokenManager = container.resolve(TokenManager)
    return manager


def current_api_token_sync(request: HttpRequest) -> ApiToken | None:
    """The request's verified bearer token, or None (verified once per request)."""
    if hasattr(request, _CACHE_ATTR):
        cached: ApiToken | None = getattr(request, _CACHE_ATTR)
        return cached
    token = bearer_token(request)
    verified = token_manager().authenticate_sync(token) if token else None
    setattr(request, _CACHE_ATTR, verified)
    return verified


async def current_api_token(request: HttpRequest) -> ApiToken | None:
    if hasattr(request, _CACHE_ATTR):
        cached: ApiToken | None = getattr(request, _CACHE_ATTR)
        return cached
    token = bearer_token(request)
    verified = await token_manager().authenticate(token) if token else None
    setattr(request, _CACHE_ATTR, verified)
    return verified


def current_api_user_sync(request: HttpRequest) -> Any | None:
    verified = current_api_token_sync(request)
    return None if verified is None else verified.user


async def current_api_user(request: HttpRequest) -> Any | None:
    verified = await current_api_token(request)
    return None if verified is None else verified.user


def bearer_unauthorized(request: HttpRequest) -> UnauthorizedException:
    """The 401 for a request that needed a bearer token: ``invalid_token`` when it sent
    a credential, ``token_required`` when it sent none (RFC 6750's two answers)."""
    if has_authorization(request):
        return UnauthorizedException(
            _("The bearer token is missing, malformed, expired or revoked."),
            code="invalid_token",
            www_authenticate='Bearer error="invalid_token"',
        )
    return UnauthorizedException(
        _("A bearer token is required."), code="token_required", www_authenticate="Bearer"
    )


def _within_scope(request: HttpRequest, verified: ApiToken) -> Any:
    # A token limited to scopes reads with ``read`` and writes with ``write``.
    refused = missing_scope(verified, (method_scope(request.method),))
    if refused is not None:
        raise insufficient_scope(refused)
    return verified.user


def require_api_auth_sync(request: HttpRequest) -> Any:
    """The bearer token's user; 401 without a good token, 403 ``insufficient_scope``
    when the token is limited to scopes without the one the method needs (``read`` for
    GET, HEAD and OPTIONS, ``write`` for the others)."""
    verified = current_api_token_sync(request)
    if verified is None:
        raise bearer_unauthorized(request)
    return _within_scope(request, verified)


async def require_api_auth(request: HttpRequest) -> Any:
    verified = await current_api_token(request)
    if verified is None:
        raise bearer_unauthorized(request)
    return _within_scope(request, verified)
