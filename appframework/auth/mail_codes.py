"""Short codes sent by mail and typed back in the same browser (confirming an address,
signing in by code).

The code lives only as a salted hash in this session, with its expiry and the tries
left: another browser cannot use it, three wrong tries spend it, and a kept copy of the
cookie cannot bring a spent one back (the spend is also recorded in the shared store).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

from ..conf import app_settings
from ..stores import shared_store

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "CODE_TRIES",
    "check_code",
    "drop_code",
    "issue_code",
    "pending_code",
]

#: No 0/O, 1/I/L: read aloud or copied by hand without mistakes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
CODE_TRIES = 3


def _digest(salt: str, code: str) -> str:
    normal = "".join(code.split()).upper()
    return hashlib.sha256(f"{salt}:{normal}".encode()).hexdigest()


def issue_code(request: HttpRequest, session_key: str, ttl: int, **payload: Any) -> str:
    """A new code for this session under ``session_key`` (replacing any earlier one),
    good for ``ttl`` seconds, carrying ``payload`` back to :func:`check_code`."""
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    salt = secrets.token_hex(16)
    request.session[session_key] = {
        **payload,
        "salt": salt,
        "hash": _digest(salt, code),
        "expires": time.time() + ttl,
        "tries": CODE_TRIES,
    }
    return code


def pending_code(request: HttpRequest, session_key: str) -> dict[str, Any] | None:
    """The payload of this session's live code under ``session_key``, or None."""
    record = request.session.get(session_key)
    if not isinstance(record, dict) or float(record.get("expires", 0)) < time.time():
        return None
    return record


def drop_code(request: HttpRequest, session_key: str) -> None:
    request.session.pop(session_key, None)


def check_code(request: HttpRequest, session_key: str, code: str) -> dict[str, Any] | None:
    """The payload when ``code`` is this session's live code (spending it), else None;
    a wrong code uses up one of the tries, the last one drops the code."""
    record = pending_code(request, session_key)
    if record is None or not isinstance(code, str):
        return None
    ttl = max(1, int(float(record["expires"]) - time.time()) + 1)
    store = shared_store(app_settings.AUTH.REVOCATION_CACHE)
    # Wrong tries are counted in the shared store too: a copy of the cookie from before
    # them (the session lives in the cookie) must not bring the tries back.
    wrong = f"af-code-wrong:{record['hash']}"
    if int(store.get(wrong) or 0) >= CODE_TRIES:
        drop_code(request, session_key)
        return None
    if constant_time_compare(_digest(str(record["salt"]), code), str(record["hash"])):
        drop_code(request, session_key)
        # A copy of the cookie from before this request still holds the code.
        if not store.add(f"af-code-spent:{record['hash']}", 1, ttl):
            return None
        return record
    store.add(wrong, 0, ttl)
    try:
        used = int(store.incr(wrong))
    except ValueError:  # expired between add and incr: so has the code
        used = CODE_TRIES
    record["tries"] = min(int(record["tries"]) - 1, CODE_TRIES - used)
    if record["tries"] <= 0:
        drop_code(request, session_key)
    else:
        request.session[session_key] = record
    return None
