"""Bearer API tokens: ``django.core.signing`` with the app secret, readable payload."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core import signing
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

from ..backends import is_active
from ..conf import app_settings
from ..exceptions import UnauthorizedException
from ..http import has_authorization

__all__ = [
    "TokenManager",
    "bearer_token",
    "current_api_user",
    "current_api_user_sync",
    "require_api_auth",
    "require_api_auth_sync",
]

_SALT = "appframework.api-token"
# A token is ~100 characters; anything far longer is not ours and is refused before any
# base64 or HMAC work is spent on it.
MAX_TOKEN_LENGTH = 1024
_CACHE_ATTR = "_appframework_api_user"


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


class TokenManager:
    """``issue(user)`` → signed token; ``verify(token)`` (async) / ``verify_sync``."""

    def _signer(self) -> signing.TimestampSigner:
        return signing.TimestampSigner(salt=_SALT)

    @staticmethod
    def _fingerprint(user: Any) -> str:
        # Changes on password change and on "log out everywhere" (the session hash mixes
        # in both), so those revoke outstanding tokens too.
        getter = getattr(user, "get_session_auth_hash", None)
        return getter()[:16] if getter else ""

    def issue(self, user: Any) -> str:
        """Signed (not encrypted) token carrying the user id; expires after
        ``API_TOKEN_EXPIRES_IN`` seconds."""
        if getattr(user, "pk", None) is None:
            raise ValueError("Cannot issue a token for an unsaved user.")
        return self._signer().sign_object({"uid": user.pk, "h": self._fingerprint(user)})

    def _payload(self, token: object) -> tuple[Any, str] | None:
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
        return uid, fingerprint

    def _accept(self, user: Any, fingerprint: str) -> Any | None:
        if user is None or not is_active(user):
            return None
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

    def verify_sync(self, token: str) -> Any | None:
        payload = self._payload(token)
        if payload is None:
            return None
        model = get_user_model()
        try:
            user = model._default_manager.get(pk=payload[0])
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return self._accept(user, payload[1])

    async def verify(self, token: str) -> Any | None:
        payload = self._payload(token)
        if payload is None:
            return None
        model = get_user_model()
        try:
            user = await model._default_manager.aget(pk=payload[0])
        except (model.DoesNotExist, ValueError, TypeError):
            return None
        return self._accept(user, payload[1])


def _manager() -> TokenManager:
    from ..container import container

    manager: TokenManager = container.resolve(TokenManager)
    return manager


def current_api_user_sync(request: HttpRequest) -> Any | None:
    if hasattr(request, _CACHE_ATTR):
        return getattr(request, _CACHE_ATTR)
    token = bearer_token(request)
    user = _manager().verify_sync(token) if token else None
    setattr(request, _CACHE_ATTR, user)
    return user


async def current_api_user(request: HttpRequest) -> Any | None:
    if hasattr(request, _CACHE_ATTR):
        return getattr(request, _CACHE_ATTR)
    token = bearer_token(request)
    user = await _manager().verify(token) if token else None
    setattr(request, _CACHE_ATTR, user)
    return user


def _unauthorized(request: HttpRequest) -> UnauthorizedException:
    if has_authorization(request):
        return UnauthorizedException(
            "The bearer token is missing, malformed, expired or revoked.",
            www_authenticate='Bearer error="invalid_token"',
        )
    return UnauthorizedException("A bearer token is required.", www_authenticate="Bearer")


def require_api_auth_sync(request: HttpRequest) -> Any:
    user = current_api_user_sync(request)
    if user is None:
        raise _unauthorized(request)
    return user


async def require_api_auth(request: HttpRequest) -> Any:
    user = await current_api_user(request)
    if user is None:
        raise _unauthorized(request)
    return user
