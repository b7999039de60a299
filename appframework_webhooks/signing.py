"""Webhook signatures.

``X-Webhook-Signature`` is the hex HMAC-SHA256 of the exact request body under the
endpoint's secret. It does not cover time, so a captured request can be replayed; the
second header, ``X-Webhook-Signature-V2``, signs ``"<id>.<timestamp>.<body>"`` and
:func:`verify_webhook` rejects it outside a time tolerance.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["sign", "sign_v2", "verify_signature", "verify_webhook"]

V2_PREFIX = "v2="


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return str(value).encode("utf-8")


def sign(secret: str | bytes, body: bytes | str) -> str:
    """Hex HMAC-SHA256 of ``body`` under ``secret``."""
    return hmac.new(_bytes(secret), _bytes(body), hashlib.sha256).hexdigest()


def sign_v2(secret: str | bytes, webhook_id: str, timestamp: int, body: bytes | str) -> str:
    """``v2=`` + hex HMAC-SHA256 of ``"<id>.<timestamp>.<body>"``."""
    message = _bytes(webhook_id) + b"." + _bytes(str(int(timestamp))) + b"." + _bytes(body)
    return V2_PREFIX + hmac.new(_bytes(secret), message, hashlib.sha256).hexdigest()


def _same(expected: str, given: Any) -> bool:
    if not isinstance(given, str | bytes):
        return False
    try:
        given_bytes = given.encode("ascii") if isinstance(given, str) else given
    except UnicodeEncodeError:
        return False
    return hmac.compare_digest(expected.encode("ascii"), given_bytes.strip().lower())


def verify_signature(secret: Any, body: Any, signature: Any) -> bool:
    """True when ``signature`` is the hex HMAC-SHA256 of ``body`` under ``secret``.

    Constant-time; never raises: a missing, non-ASCII or malformed signature is False,
    and so is any signature under an empty secret (anyone can compute that one).
    """
    try:
        if not secret or body is None:
            return False
        return _same(sign(secret, body), signature)
    except Exception:
        return False


def verify_webhook(
    secret: Any,
    headers: Mapping[str, Any],
    body: Any,
    *,
    tolerance: int = 300,
    now: float | None = None,
) -> bool:
    """Receiver side of the replay-proof signature: ``X-Webhook-Signature-V2`` must sign
    ``X-Webhook-Id``, ``X-Webhook-Timestamp`` and ``body``, and the timestamp must be
    within ``tolerance`` seconds of now. Never raises. ``headers`` may be Django's
    ``request.headers`` or any case-sensitive mapping of the header names."""
    try:
        webhook_id = headers.get("X-Webhook-Id")
        timestamp = headers.get("X-Webhook-Timestamp")
        signature = headers.get("X-Webhook-Signature-V2")
        if not webhook_id or not timestamp or not signature or not secret:
            return False
        stamp = int(str(timestamp))
        current = time.time() if now is None else now
        if abs(current - stamp) > tolerance:
            return False
        return _same(sign_v2(secret, str(webhook_id), stamp, body), signature)
    except Exception:
        return False
