"""PBKDF2-HMAC-SHA256 password hashes in Django's own format.

``hash_password`` delegates to Django's ``PBKDF2PasswordHasher``, so the strings are
exactly Django's (``pbkdf2_sha256$<iterations>$<salt>$<hash>``): Django verifies ours and
we verify Django's. The iteration count is the running Django's default unless
``APPFRAMEWORK["AUTH"]["PASSWORD_ITERATIONS"]`` raises it.
"""

from __future__ import annotations

import math

from django.contrib.auth.hashers import BasePasswordHasher, PBKDF2PasswordHasher, identify_hasher
from django.utils.crypto import RANDOM_STRING_CHARS

from ..conf import app_settings

__all__ = [
    "MAX_PASSWORD_BYTES",
    "hash_password",
    "needs_rehash",
    "password_is_usable",
    "verify_installed_password",
    "verify_password",
]

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


# What a stored hash of another hasher may ask for before it is refused unchecked, so
# a corrupted or hostile row cannot pin a CPU or take gigabytes: each bound is far
# above what Django's hashers write (scrypt N=2**14, argon2 100 MiB and 2 passes,
# bcrypt 2**12 rounds, PBKDF2-SHA1 well under a million iterations).
_COST_BOUNDS = {
    "iterations": _MAX_ITERATIONS,
    "work_factor": 2**20,  # scrypt's N; bcrypt's log2 rounds is checked below
    "memory_cost": 2**20,  # argon2, KiB: 1 GiB
    "time_cost": 64,  # argon2 passes
    "parallelism": 64,
    "block_size": 64,
}
_BCRYPT_MAX_ROUNDS = 16


def _within_cost(hasher: BasePasswordHasher, encoded: str) -> bool:
    try:
        decoded = hasher.decode(encoded)
    except (NotImplementedError, ValueError, TypeError, IndexError, KeyError):
        # A hasher of the project's own that cannot decode: its verify() is trusted.
        return True
    bounds = dict(_COST_BOUNDS)
    if str(hasher.algorithm).startswith("bcrypt"):
        bounds["work_factor"] = _BCRYPT_MAX_ROUNDS
    for name, bound in bounds.items():
        value = decoded.get(name)
        if value is not None and not (isinstance(value, int) and 0 < value <= bound):
            return False
    return True


def _installed_hasher(encoded: object) -> BasePasswordHasher | None:
    """The hasher of ``PASSWORD_HASHERS`` that wrote ``encoded`` (not the suite's
    PBKDF2-SHA256, which :func:`verify_password` checks), if any."""
    if not isinstance(encoded, str) or not encoded or encoded.startswith("!"):
        return None
    try:
        hasher = identify_hasher(encoded)
    except ValueError:  # no installed hasher has this algorithm
        return None
    return None if hasher.algorithm == _ALGORITHM else hasher


def verify_installed_password(password: str, encoded: str) -> bool:
    """:func:`verify_password`, and for a hash of another hasher listed in Django's
    ``PASSWORD_HASHERS`` (scrypt, argon2, bcrypt, PBKDF2-SHA1, ...) that hasher's check,
    so users whose hashes were written before the suite was adopted still sign in.
    A hash whose cost is beyond any hasher's defaults by far is refused unchecked.
    Never raises."""
    if verify_password(password, encoded):
        return True
    hasher = _installed_hasher(encoded)
    if hasher is None or not _password_bytes_ok(password) or not _within_cost(hasher, encoded):
        return False
    try:
        return bool(hasher.verify(_hashable(password), encoded))
    except (ValueError, TypeError, UnicodeError, OverflowError):
        return False


def password_is_usable(encoded: str) -> bool:
    """Whether ``encoded`` is a hash a password can match: the suite's PBKDF2 or one of
    a hasher in ``PASSWORD_HASHERS`` (an unusable ``!`` marker, an empty value or an
    unknown algorithm is not)."""
    return _parse(encoded) is not None or _installed_hasher(encoded) is not None


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
