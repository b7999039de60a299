"""CSRF tokens: 32 alphanumerics, signed double-submit bound to the session.

A token is 16 random characters followed by 16 characters of a keyed BLAKE2b MAC over
them and the session binding (the logged-in user id and a nonce renewed at each
login). It has the shape of Django's CSRF secret, so ``get_token()`` can carry it.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import string

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

from ..conf import derived_setting

__all__ = [
    "NONCE_SESSION_KEY",
    "TOKEN_LENGTH",
    "mint_token",
    "rotate_nonce",
    "session_binding",
    "session_cookie_name",
    "token_is_valid",
    "unmask",
]

_CHARS = string.ascii_letters + string.digits  # Django's CSRF_ALLOWED_CHARS
_CHARSET = frozenset(_CHARS)
_HALF = 16
TOKEN_LENGTH = 2 * _HALF  # Django's CSRF_SECRET_LENGTH, so get_token can mask it
_SALT = "appframework.csrf"
#: Session key of the per-login nonce the token is bound to (set on user_logged_in).
NONCE_SESSION_KEY = "_appframework_csrf_nonce"

# 62 symbols from a byte: a slight bias, 16 symbols still carry over 95 bits.
_ALNUM_TABLE = bytes(ord(_CHARS[b % 62]) for b in range(256))


def _alnum(raw: bytes) -> str:
    return raw.translate(_ALNUM_TABLE).decode("ascii")


@functools.lru_cache(maxsize=16)
def _key(secret: str) -> bytes:
    # A per-purpose key derived once per secret (salted_hmac re-derives it every call).
    return hashlib.sha256(f"{_SALT}{secret}".encode()).digest()


@derived_setting
def _secrets() -> tuple[str, tuple[str, ...]]:
    return settings.SECRET_KEY, tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ()))


def _mac(nonce: str, binding: str, secret: str | None = None) -> str:
    # Keyed BLAKE2b is a MAC by design and a third of HMAC-SHA256's cost; it runs on
    # every cookieless response.
    key = _key(_secrets()[0] if secret is None else secret)
    digest = hashlib.blake2b(f"{nonce}|{binding}".encode(), key=key, digest_size=_HALF).digest()
    return _alnum(digest)


def mint_token(binding: str) -> str:
    nonce = _alnum(secrets.token_bytes(_HALF))
    return nonce + _mac(nonce, binding)


def token_is_valid(token: object, binding: str) -> bool:
    if not isinstance(token, str) or len(token) != TOKEN_LENGTH or not _CHARSET.issuperset(token):
        return False
    return _verified(token, binding, _secrets())


@functools.lru_cache(maxsize=4096)
def _verified(token: str, binding: str, keys: tuple[str, tuple[str, ...]]) -> bool:
    # A returning browser sends the same cookie with every request: its MAC is checked
    # once per process and key set (the keys are part of the cache key, so a rotation
    # checks again), the answer remembered for the exact token and binding.
    nonce, mac = token[:_HALF], token[_HALF:]
    secret, fallbacks = keys
    if constant_time_compare(mac, _mac(nonce, binding, secret)):
        return True
    # Tokens minted under a rotated-out key stay good while it is a fallback.
    return any(constant_time_compare(mac, _mac(nonce, binding, old)) for old in fallbacks)


def unmask(masked: str) -> str | None:
    """Undo Django's ``_mask_cipher_secret`` (64 chars from ``{% csrf_token %}``)."""
    if len(masked) != 2 * TOKEN_LENGTH or not _CHARSET.issuperset(masked):
        return None
    mask, cipher = masked[:TOKEN_LENGTH], masked[TOKEN_LENGTH:]
    return "".join(
        _CHARS[(_CHARS.index(c) - _CHARS.index(m)) % 62] for c, m in zip(cipher, mask, strict=True)
    )


@derived_setting
def session_cookie_name() -> str:
    """``SESSION_COOKIE_NAME``, read once per settings change (it is checked per request)."""
    return str(settings.SESSION_COOKIE_NAME)


def session_binding(request: HttpRequest) -> str:
    """What a token is bound to: the logged-in user id and the per-login nonce."""
    session = getattr(request, "session", None)
    if session is None:
        return ""
    if not session.accessed and session_cookie_name() not in request.COOKIES:
        return ""  # no session cookie and nothing stored yet: nothing to decode
    uid = session.get(SESSION_KEY)
    if not uid:
        return ""
    return f"{uid}:{session.get(NONCE_SESSION_KEY, '')}"


def rotate_nonce(request: HttpRequest) -> None:
    """Give the session a new nonce (on login), so tokens issued before it stop working."""
    session = getattr(request, "session", None)
    if session is not None:
        session[NONCE_SESSION_KEY] = secrets.token_urlsafe(16)
