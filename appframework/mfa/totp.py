"""TOTP (RFC 6238): secrets, provisioning URIs, and code checks that never raise."""

from __future__ import annotations

import base64
import hmac
import re
import secrets
import time
from typing import Any
from urllib.parse import quote, urlencode

__all__ = ["STEP", "generate_secret", "matching_counter", "provisioning_uri", "verify_totp"]

STEP = 30
DIGITS = 6
SECRET_BYTES = 20  # 160 bits, RFC 4226's recommended key length
MAX_WINDOW = 10  # steps either side at most: a wider window only helps guessing
_CODE = re.compile(r"[0-9]{6}", re.ASCII)


def generate_secret() -> str:
    """A random base32 secret of 160 bits (32 characters, no padding)."""
    return base64.b32encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def provisioning_uri(secret: str, name: str, issuer: str | None = None) -> str:
    """``otpauth://totp/<issuer>:<name>?secret=...&issuer=...`` for authenticator apps
    (what the enrollment QR code encodes)."""
    # Built here rather than by pyotp, which leaves "/" unescaped in the label: an
    # account name with a slash would change the URI's path.
    label = quote(f"{issuer}:{name}" if issuer else name, safe=":@")
    params = {"secret": secret, **({"issuer": issuer} if issuer else {})}
    params.update(algorithm="SHA1", digits=str(DIGITS), period=str(STEP))
    return f"otpauth://totp/{label}?{urlencode(params, quote_via=quote)}"


def _code(code: Any) -> str | None:
    """Six ASCII digits (surrounding whitespace ignored), else None: inner spaces,
    letters, other lengths and non-ASCII digits such as '١٢٣٤٥٦' are never a code."""
    if not isinstance(code, str):
        return None
    code = code.strip()
    return code if _CODE.fullmatch(code) else None


def matching_counter(
    secret: Any, code: Any, valid_window: int = 1, *, now: float | None = None
) -> int | None:
    """The time step (counter) whose code is ``code``, searching ``valid_window`` steps
    either side of now; None when none matches or the input is not usable."""
    candidate = _code(code)
    if candidate is None or not isinstance(secret, str) or not secret:
        return None
    # Imported here: the challenge (flows) runs for passkey users too, in projects
    # installed without the "mfa" extra that brings pyotp.
    import pyotp

    try:
        totp = pyotp.TOTP(secret, digits=DIGITS, interval=STEP)
        current = totp.timecode(_datetime(now))
        window = min(MAX_WINDOW, max(0, int(valid_window)))
        for counter in range(current - window, current + window + 1):
            # Constant-time: a code's digits must not leak through timing.
            if hmac.compare_digest(totp.generate_otp(counter), candidate):
                return counter
    except (ValueError, TypeError, OverflowError, base64.binascii.Error):  # type: ignore[attr-defined]
        return None
    return None


def _datetime(now: float | None) -> Any:
    import datetime

    return datetime.datetime.fromtimestamp(time.time() if now is None else now, datetime.UTC)


def verify_totp(secret: Any, code: Any, valid_window: int = 1) -> bool:
    """True when ``code`` is the code of ``secret`` for now, or ``valid_window`` steps
    of 30 s either side. Never raises: None, spaces inside, non-digits, wrong length,
    non-ASCII digits or a bad secret are False."""
    return matching_counter(secret, code, valid_window) is not None
