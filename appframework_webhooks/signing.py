"""Webhook signatures: the Standard Webhooks headers and the suite's own.

Every delivery carries both sets, computed from the same two HMAC-SHA256 digests:

* ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64>`` of
  ``"<id>.<timestamp>.<body>"`` (the Standard Webhooks specification, which the official
  libraries of a dozen languages verify); during a secret rotation the header carries one
  ``v1,`` signature per valid secret, space-separated, the newest first;
* ``X-Webhook-Signature`` (hex HMAC of the body alone: no time, so a captured request
  can be replayed) and ``X-Webhook-Signature-V2: v2=<hex>`` (the same message as
  ``webhook-signature``, in hex), signed with one secret: the oldest still valid, so a
  receiver that has not deployed a rotated secret yet keeps working through the overlap.

Secrets: ``whsec_<base64>`` (the specification's form: the key is the decoded bytes), or
any other string (a secret set before the Standard Webhooks headers existed: its UTF-8
bytes are the key, and :func:`whsec` shows the same key in the ``whsec_`` form).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SECRET_PREFIX",
    "SigningKeys",
    "new_secret",
    "secret_key",
    "sign",
    "sign_v2",
    "signature_headers",
    "signing_keys",
    "verify_signature",
    "verify_webhook",
    "whsec",
]

V2_PREFIX = "v2="
SECRET_PREFIX = "whsec_"
#: Random bytes of a new secret (the specification asks for 24 to 64).
SECRET_BYTES = 24


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return str(value).encode("utf-8")


@functools.lru_cache(maxsize=4096)
def _key_of(secret: str) -> bytes:
    if secret.startswith(SECRET_PREFIX):
        encoded = secret[len(SECRET_PREFIX) :]
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if key:
            return key
    return secret.encode("utf-8")


def secret_key(secret: str | bytes) -> bytes:
    """The HMAC key of ``secret``: the decoded bytes of a ``whsec_<base64>`` secret, the
    UTF-8 bytes of any other string (worked out once per secret and process)."""
    if isinstance(secret, bytes | bytearray | memoryview):
        return bytes(secret)
    return _key_of(str(secret))


def whsec(secret: str | bytes) -> str:
    """``secret`` in the ``whsec_<base64>`` form the official libraries take: the same
    key, so a secret set before this form existed verifies under both."""
    return SECRET_PREFIX + base64.b64encode(secret_key(secret)).decode("ascii")


def new_secret() -> str:
    """A new random secret, ``whsec_`` and 24 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


@dataclass(frozen=True)
class SigningKeys:
    """The keys one delivery attempt signs with: every valid key, newest first, for
    ``webhook-signature``; ``legacy`` (the oldest valid) for the suite's own headers."""

    keys: tuple[bytes, ...]

    @property
    def legacy(self) -> bytes:
        return self.keys[-1]


@functools.lru_cache(maxsize=4096)
def _keys(current: str, previous: str | None) -> SigningKeys:
    keys = [secret_key(current)]
    if previous and secret_key(previous) != keys[0]:
        keys.append(secret_key(previous))
    return SigningKeys(tuple(keys))


def signing_keys(
    secret: str | SigningKeys | None, previous: str | None = None
) -> SigningKeys | None:
    """The keys of an endpoint's current secret and, during a rotation's overlap, its
    previous one; None for an endpoint without a secret (unsigned deliveries)."""
    if isinstance(secret, SigningKeys):
        return secret
    if not secret:
        return None
    return _keys(secret, previous or None)


def sign(secret: str | bytes, body: bytes | str) -> str:
    """Hex HMAC-SHA256 of ``body`` under ``secret`` (``X-Webhook-Signature``)."""
    return hmac.new(secret_key(secret), _bytes(body), hashlib.sha256).hexdigest()


def _message(webhook_id: str, timestamp: int, body: bytes | str) -> bytes:
    return _bytes(webhook_id) + b"." + _bytes(str(int(timestamp))) + b"." + _bytes(body)


def sign_v2(secret: str | bytes, webhook_id: str, timestamp: int, body: bytes | str) -> str:
    """``v2=`` + hex HMAC-SHA256 of ``"<id>.<timestamp>.<body>"`` (``X-Webhook-Signature-V2``)."""
    digest = hmac.new(secret_key(secret), _message(webhook_id, timestamp, body), hashlib.sha256)
    return V2_PREFIX + digest.hexdigest()


def signature_headers(
    keys: SigningKeys, webhook_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three signature headers of one attempt: one HMAC of the body and one of
    ``"<id>.<timestamp>.<body>"`` per key (hex for the suite's header, base64 for the
    Standard Webhooks one)."""
    message = _message(webhook_id, timestamp, body)
    standard = []
    legacy_v2 = ""
    last = len(keys.keys) - 1
    for index, key in enumerate(keys.keys):
        digest = hmac.new(key, message, hashlib.sha256).digest()
        standard.append("v1," + base64.b64encode(digest).decode("ascii"))
        if index == last:
            legacy_v2 = V2_PREFIX + digest.hex()
    return {
        "X-Webhook-Signature": hmac.new(keys.legacy, body, hashlib.sha256).hexdigest(),
        "X-Webhook-Signature-V2": legacy_v2,
        "webhook-signature": " ".join(standard),
    }


# -- receiving ------------------------------------------------------------------------------
def _secrets(secret: Any) -> list[bytes]:
    """The keys of ``secret``: one secret, or several (a receiver during a rotation)."""
    if isinstance(secret, str | bytes | bytearray | memoryview):
        candidates: Iterable[Any] = [secret]
    elif isinstance(secret, Iterable):
        candidates = secret
    else:
        return []
    return [secret_key(s) for s in candidates if isinstance(s, str | bytes) and s]


def _same(expected: bytes, given: Any) -> bool:
    if not isinstance(given, str | bytes):
        return False
    try:
        given_bytes = given.encode("ascii") if isinstance(given, str) else given
    except UnicodeEncodeError:
        return False
    return hmac.compare_digest(expected, given_bytes.strip().lower())


def _header(headers: Mapping[str, Any], name: str) -> Any:
    """``name`` from ``headers``, whatever the case of the keys (Django's
    ``request.headers`` already ignores it; a plain dict may not)."""
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        for key, found in headers.items():
            if isinstance(key, str) and key.lower() == wanted:
                return found
    return value


def verify_signature(secret: Any, body: Any, signature: Any) -> bool:
    """True when ``signature`` is the hex HMAC-SHA256 of ``body`` under ``secret`` (or
    one of several secrets: a list, during a rotation).

    Constant-time; never raises: a missing, non-ASCII or malformed signature is False,
    and so is any signature under an empty secret (anyone can compute that one).
    """
    try:
        if body is None:
            return False
        payload = _bytes(body)
        return any(
            _same(hmac.new(key, payload, hashlib.sha256).hexdigest().encode("ascii"), signature)
            for key in _secrets(secret)
        )
    except Exception:
        return False


def _standard_signatures(header: str) -> list[bytes]:
    found = []
    for item in header.split(" "):
        version, _, value = item.partition(",")
        if version == "v1" and value:
            try:
                found.append(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                continue
    return found


def verify_webhook(
    secret: Any,
    headers: Mapping[str, Any],
    body: Any,
    *,
    tolerance: int = 300,
    now: float | None = None,
) -> bool:
    """Receiver side of the time-bound signatures. With a ``webhook-signature`` header
    (Standard Webhooks): one of its ``v1,`` signatures must sign ``webhook-id``,
    ``webhook-timestamp`` and ``body`` under ``secret``; without one, the suite's
    ``X-Webhook-Signature-V2`` must sign ``X-Webhook-Id``, ``X-Webhook-Timestamp`` and
    ``body``. Either way the timestamp must be within ``tolerance`` seconds of now.

    ``secret`` is a ``whsec_`` secret, a plain one, or a list of them (a receiver during
    a rotation). Never raises. ``headers`` may be Django's ``request.headers`` or any
    mapping of the header names, in any case."""
    try:
        keys = _secrets(secret)
        standard = _header(headers, "webhook-signature")
        if standard:
            webhook_id = _header(headers, "webhook-id")
            timestamp = _header(headers, "webhook-timestamp")
        else:
            webhook_id = _header(headers, "X-Webhook-Id")
            timestamp = _header(headers, "X-Webhook-Timestamp")
        signature = standard or _header(headers, "X-Webhook-Signature-V2")
        if not webhook_id or not timestamp or not signature or not keys:
            return False
        stamp = int(str(timestamp))
        current = time.time() if now is None else now
        if abs(current - stamp) > tolerance:
            return False
        message = _message(str(webhook_id), stamp, body)
        digests = [hmac.new(key, message, hashlib.sha256).digest() for key in keys]
        if standard:
            given = _standard_signatures(str(standard))
            return any(hmac.compare_digest(d, g) for d in digests for g in given)
        return any(_same((V2_PREFIX + d.hex()).encode("ascii"), signature) for d in digests)
    except Exception:
        return False
