"""PBKDF2-HMAC-SHA256 password hashes in Django's own format.

``hash_password`` delegates to Django's ``PBKDF2PasswordHasher``, so the strings are
exactly Django's (``pbkdf2_sha256$<iterations>$<salt>$<hash>``): Django verifies ours and
we verify Django's. The iteration count is the running Django's default unless
``APPFRAMEWORK["AUTH"]["PASSWORD_ITERATIONS"]`` raises it.
"""

from __future__ import annotations

import math

from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.utils.crypto import RANDOM_STRING_CHARS

from ..conf import app_settings

__all__ = ["MAX_PASSWORD_BYTES", "hash_password", "needs_rehash", "verify_password"]

#: Longest accepted password, in UTF-8 bytes. Long enough for any passphrase, short
#: enough that a request cannot make the server hash megabytes.
MAX_PASSWORD_BYTES = 4096

# Upper bound on a stored hash's iteration count we are willing to run, so a corrupted
# or hostile hash string cannot pin a CPU for minutes.
_MAX_ITERATIONS = 100_000_000

_ALGORITHM = PBKDF2PasswordHasher.algorithm


class _Hasher(PBKDF2PasswordHasher):
    def __init__(self, iterations: int) -> None:
        self.iterations = iterations


def _iterations() -> int:
    configured = int(app_settings.AUTH.PASSWORD_ITERATIONS or 0)
    return max(configured, PBKDF2PasswordHasher.iterations)


def _hasher() -> PBKDF2PasswordHasher:
    iterations = _iterations()
    if iterations == PBKDF2PasswordHasher.iterations:
        return _DEFAULT_HASHER
    return _Hasher(iterations)


_DEFAULT_HASHER = PBKDF2PasswordHasher()


def _password_bytes_ok(password: object) -> bool:
    return (
        isinstance(password, str)
        and 0 < len(password.encode("utf-8", "surrogatepass")) <= MAX_PASSWORD_BYTES
    )


def hash_password(password: str) -> str:
    """Hash ``password``; ``ValueError`` if it is empty or over ``MAX_PASSWORD_BYTES``."""
    if not isinstance(password, str):
        raise TypeError("password must be a str")
    if not password:
        raise ValueError("Password must not be empty.")
    if len(password.encode("utf-8", "surrogatepass")) > MAX_PASSWORD_BYTES:
        raise ValueError(f"Password must be at most {MAX_PASSWORD_BYTES} bytes in UTF-8.")
    hasher = _hasher()
    return hasher.encode(password, hasher.salt())


def _parse(encoded: object) -> tuple[int, str, str] | None:
    if not isinstance(encoded, str):
        return None
    parts = encoded.split("$")
    if len(parts) != 4 or parts[0] != _ALGORITHM:
        return None
    _, iterations, salt, digest = parts
    # isascii(): str.isdigit() also accepts "²" and other digits int() refuses; the
    # length bound keeps int() clear of its huge-number limit.
    if not (iterations.isascii() and iterations.isdigit() and len(iterations) <= 12):
        return None
    if not salt or not digest:
        return None
    count = int(iterations)
    if not 0 < count <= _MAX_ITERATIONS:
        return None
    return count, salt, digest


def _hashable(password: str) -> str:
    """``password`` as PBKDF2 can take it: lone surrogates (valid in JSON) replaced, so
    such input costs a full hash like any other instead of failing fast."""
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        return password.encode("utf-8", "replace").decode("utf-8")
    return password


def verify_password(password: str, encoded: str) -> bool:
    """Constant-time check of ``password`` against ``encoded``; never raises.

    False for a malformed hash, a non-PBKDF2 hash, or a password that ``hash_password``
    would refuse (empty or over-long).
    """
    parsed = _parse(encoded)
    if parsed is None or not _password_bytes_ok(password):
        return False
    try:
        hashable = _hashable(password)
        # verify() re-hashes with the iterations and salt read from ``encoded``.
        correct = _DEFAULT_HASHER.verify(hashable, encoded) and hashable is password
        if not correct and parsed[0] < _iterations():
            # A wrong guess against an old, cheaper hash costs today's full time (as
            # Django's check_password does), so timing does not reveal old accounts.
            _hasher().harden_runtime(hashable, encoded)
        return correct
    except (ValueError, TypeError, UnicodeError, OverflowError):
        return False


def needs_rehash(encoded: str) -> bool:
    """True when ``encoded`` uses fewer iterations (or a shorter salt) than we now would."""
    parsed = _parse(encoded)
    if parsed is None:
        return True
    # Not Django's must_update(): that is also true for *more* iterations than today's,
    # and re-hashing then would weaken a stronger hash.
    salt_bits = len(parsed[1]) * math.log2(len(RANDOM_STRING_CHARS))
    return parsed[0] < _iterations() or salt_bits < PBKDF2PasswordHasher.salt_entropy


def burn_hash_time(password: str) -> None:
    """Spend one hash's worth of time; used when the user does not exist, so a login for
    an unknown name takes as long as one for a known name."""
    if _password_bytes_ok(password):
        _hasher().encode(_hashable(password), "appframeworkdummy0000000")
