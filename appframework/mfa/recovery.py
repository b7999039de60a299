"""Recovery codes: shown once in plaintext, stored only as salted hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

__all__ = [
    "generate_recovery_codes",
    "hash_recovery_code",
    "normalise_recovery_code",
    "recovery_code_matches",
]

COUNT = 10
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read off paper
LENGTH = 12  # about 59 bits each
PREFIX = "sha256"


def generate_recovery_codes(count: int = COUNT) -> list[str]:
    """``count`` fresh codes like ``abcd-efgh-jkmn``."""
    codes = []
    for _ in range(count):
        raw = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        codes.append(f"{raw[:4]}-{raw[4:8]}-{raw[8:]}")
    return codes


def normalise_recovery_code(code: Any) -> str | None:
    if not isinstance(code, str):
        return None
    cleaned = "".join(code.split()).replace("-", "").lower()
    if len(cleaned) != LENGTH or not cleaned.isascii() or any(c not in ALPHABET for c in cleaned):
        return None
    return cleaned


def hash_recovery_code(code: str, salt: str | None = None) -> str:
    """``sha256$<salt>$<hex>`` of the normalised code: random salt per code, so equal
    codes hash differently and a stolen table gives nothing to look up."""
    cleaned = normalise_recovery_code(code)
    if cleaned is None:
        raise ValueError("not a recovery code")
    salt = salt or secrets.token_hex(16)
    digest = hashlib.sha256(f"{salt}${cleaned}".encode("ascii")).hexdigest()
    return f"{PREFIX}${salt}${digest}"


def recovery_code_matches(stored: Any, code: Any) -> bool:
    """Constant-time check of ``code`` against one stored hash; never raises."""
    cleaned = normalise_recovery_code(code)
    if cleaned is None or not isinstance(stored, str):
        return False
    try:
        prefix, salt, _ = stored.split("$", 2)
    except ValueError:
        return False
    if prefix != PREFIX:
        return False
    return hmac.compare_digest(hash_recovery_code(cleaned, salt), stored)
