"""Password hashing: format, Django interop, limits, verify never raises, re-hash (X10),
and the unknown-user timing path."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from django.contrib.auth import hashers as django_hashers
from django.contrib.auth.hashers import PBKDF2PasswordHasher, check_password, make_password

from appframework.auth import MAX_PASSWORD_BYTES, AuthManager, hash_password, verify_password

HASH_RE = re.compile(r"^pbkdf2_sha256\$(\d+)\$([A-Za-z0-9+/=._-]+)\$([A-Za-z0-9+/]+={0,2})$")


def _iterations(encoded: str) -> int:
    return int(encoded.split("$")[1])


def _weak_hash(password: str, iterations: int) -> str:
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(password, hasher.salt(), iterations=iterations)


# -- format and Django interop ---------------------------------------------------------------
def test_hash_password_has_pbkdf2_sha256_iterations_salt_hash_format() -> None:
    encoded = hash_password("s3cret passphrase")
    match = HASH_RE.match(encoded)
    assert match, encoded
    _, salt, digest = match.groups()
    assert len(salt) >= 22  # 128 bits of salt, Django's salt_entropy
    assert len(base64.b64decode(digest)) == 32  # SHA-256 output


def test_hash_password_uses_a_fresh_salt_each_time() -> None:
    first, second = hash_password("same"), hash_password("same")
    assert first != second
    assert first.split("$")[2] != second.split("$")[2]


@pytest.mark.real_hashing
def test_hash_password_uses_at_least_djangos_default_iterations(real_iterations: int) -> None:
    assert PBKDF2PasswordHasher.iterations == real_iterations
    assert _iterations(hash_password("pw")) >= real_iterations


def test_django_check_password_verifies_our_hash() -> None:
    encoded = hash_password("interop works")
    assert check_password("interop works", encoded)
    assert not check_password("interop fails", encoded)


def test_verify_password_verifies_a_hash_made_by_django_make_password() -> None:
    encoded = make_password("from django", hasher="pbkdf2_sha256")
    assert encoded.startswith("pbkdf2_sha256$")
    assert verify_password("from django", encoded)
    assert not verify_password("from Django", encoded)


def test_verify_password_accepts_the_right_password() -> None:
    assert verify_password("right", hash_password("right")) is True


def test_verify_password_checks_unicode_passwords() -> None:
    encoded = hash_password("pässwörd 密码 🔑")
    assert verify_password("pässwörd 密码 🔑", encoded) is True
    assert verify_password("passwörd 密码 🔑", encoded) is False


# -- hash_password limits ----------------------------------------------------------------------
def test_hash_password_rejects_empty_password_with_value_error() -> None:
    with pytest.raises(ValueError):
        hash_password("")


def test_hash_password_rejects_one_byte_over_the_limit_with_value_error() -> None:
    with pytest.raises(ValueError):
        hash_password("a" * (MAX_PASSWORD_BYTES + 1))


def test_hash_password_counts_utf8_bytes_not_characters() -> None:
    # 2049 two-byte characters: under the limit in characters, over it in bytes.
    password = "é" * (MAX_PASSWORD_BYTES // 2 + 1)
    assert len(password) < MAX_PASSWORD_BYTES < len(password.encode("utf-8"))
    with pytest.raises(ValueError):
        hash_password(password)


def test_hash_password_accepts_exactly_max_password_bytes() -> None:
    ascii_max = "a" * MAX_PASSWORD_BYTES
    multibyte_max = "é" * (MAX_PASSWORD_BYTES // 2)
    assert len(multibyte_max.encode("utf-8")) == MAX_PASSWORD_BYTES
    assert verify_password(ascii_max, hash_password(ascii_max))
    assert verify_password(multibyte_max, hash_password(multibyte_max))


# -- verify_password never raises ---------------------------------------------------------------
MALFORMED_HASHES: list[Any] = [
    "",
    "garbage",
    "$$$",
    "pbkdf2_sha256",
    "pbkdf2_sha256$",
    "pbkdf2_sha256$1000",
    "pbkdf2_sha256$1000$salt",
    "pbkdf2_sha256$1000$salt$",
    "pbkdf2_sha256$$salt$aGFzaA==",
    "pbkdf2_sha256$1000$$aGFzaA==",
    "pbkdf2_sha256$1000$salt$aGFzaA==$extra",
    "pbkdf2_sha256$abc$salt$aGFzaA==",
    "pbkdf2_sha256$-1000$salt$aGFzaA==",
    "pbkdf2_sha256$1e3$salt$aGFzaA==",
    "pbkdf2_sha256$ 1000$salt$aGFzaA==",
    "pbkdf2_sha256$0$salt$aGFzaA==",
    "pbkdf2_sha256$99999999999999999999$salt$aGFzaA==",
    "pbkdf2_sha1$1000$salt$aGFzaA==",
    "PBKDF2_SHA256$1000$salt$aGFzaA==",
    "md5$salt$5f4dcc3b5aa765d61d8327deb882cf99",
    "5f4dcc3b5aa765d61d8327deb882cf99",
    "argon2$argon2id$v=19$m=102400,t=2,p=8$c29tZXNhbHQ$aGFzaA",
    "bcrypt_sha256$$2b$12$abcdefghijklmnopqrstuv",
    "!",
    "!unusable",
    None,
    0,
    1000,
    b"pbkdf2_sha256$1000$salt$aGFzaA==",
    ["pbkdf2_sha256", "1000", "salt", "hash"],
]


@pytest.mark.parametrize("encoded", MALFORMED_HASHES, ids=repr)
def test_verify_password_returns_false_for_malformed_hash(encoded: Any) -> None:
    assert verify_password("password", encoded) is False


@pytest.mark.parametrize(
    "iterations",
    ["\u00b2", "\u0661\u0660\u0660\u0660", "9" * 5000],
    ids=["superscript-two", "arabic-indic-digits", "5000-digit-number"],
)
def test_verify_password_returns_false_for_absurd_iteration_field(iterations: str) -> None:
    # str.isdigit() is true for all three, but "²" is not an int() literal and a
    # 5000-digit string exceeds Python's int-from-str limit: neither may raise.
    encoded = f"pbkdf2_sha256${iterations}$c2FsdHNhbHRzYWx0c2FsdA$aGFzaA=="
    assert verify_password("password", encoded) is False


def test_verify_password_refuses_iteration_count_too_large_to_run() -> None:
    # A hostile stored hash must not pin the CPU: rejected before any hashing.
    encoded = "pbkdf2_sha256$4000000000$c2FsdHNhbHRzYWx0c2FsdA$aGFzaA=="
    assert verify_password("password", encoded) is False


def test_verify_password_returns_false_for_wrong_password() -> None:
    assert verify_password("wrong", hash_password("right")) is False


def test_verify_password_returns_false_for_over_long_password() -> None:
    encoded = hash_password("a" * MAX_PASSWORD_BYTES)
    assert verify_password("a" * (MAX_PASSWORD_BYTES + 1), encoded) is False
    assert verify_password("é" * (MAX_PASSWORD_BYTES // 2 + 1), encoded) is False


def test_verify_password_returns_false_for_empty_password() -> None:
    # Even against a hash that (made by Django) really is the hash of "".
    assert verify_password("", make_password("", hasher="pbkdf2_sha256")) is False


@pytest.mark.parametrize(
    "password",
    [None, 123, b"right", ["right"], object()],
    ids=["none", "int", "bytes", "list", "object"],
)
def test_verify_password_returns_false_for_non_str_password(password: Any) -> None:
    assert verify_password(password, hash_password("right")) is False


def test_verify_password_returns_false_for_lone_surrogate_password() -> None:
    assert verify_password("\ud800", hash_password("right")) is False


def test_verify_password_returns_false_for_hash_with_corrupted_digest() -> None:
    encoded = hash_password("right")
    algorithm, iterations, salt, digest = encoded.split("$")
    flipped = ("B" if digest[5] != "B" else "C").join([digest[:5], digest[6:]])
    assert verify_password("right", "$".join([algorithm, iterations, salt, flipped])) is False


# -- X10: weaker hashes verify and are upgraded ---------------------------------------------------
def test_hash_with_fewer_iterations_than_current_still_verifies() -> None:
    current = PBKDF2PasswordHasher.iterations
    encoded = _weak_hash("old password", current // 2)
    assert _iterations(encoded) < current
    assert verify_password("old password", encoded) is True


@pytest.mark.django_db
def test_check_password_rehashes_weaker_hash_to_current_iterations_and_saves(user: Any) -> None:
    current = PBKDF2PasswordHasher.iterations
    user.password_hash = _weak_hash("upgrade me", current // 2)
    user.save()

    assert user.check_password("upgrade me") is True

    stored = type(user).objects.get(pk=user.pk).password_hash
    assert _iterations(stored) == current
    assert verify_password("upgrade me", stored)


@pytest.mark.django_db
def test_check_password_with_wrong_password_does_not_rehash(user: Any) -> None:
    weak = _weak_hash("upgrade me", PBKDF2PasswordHasher.iterations // 2)
    user.password_hash = weak
    user.save()

    assert user.check_password("not it") is False
    assert type(user).objects.get(pk=user.pk).password_hash == weak


@pytest.mark.django_db
def test_login_attempt_upgrades_weaker_hash(user: Any) -> None:
    user.password_hash = _weak_hash("upgrade me", PBKDF2PasswordHasher.iterations // 2)
    user.save()

    assert AuthManager().attempt_sync(user.email, "upgrade me") == user

    stored = type(user).objects.get(pk=user.pk).password_hash
    assert _iterations(stored) == PBKDF2PasswordHasher.iterations


@pytest.mark.django_db
def test_check_password_does_not_downgrade_a_hash_with_more_iterations(user: Any) -> None:
    # needs_rehash() documents "True when encoded uses *fewer* iterations": a stronger
    # stored hash must be kept, not re-hashed down to the current default.
    stronger = _weak_hash("keep me", PBKDF2PasswordHasher.iterations * 2)
    user.password_hash = stronger
    user.save()

    assert user.check_password("keep me") is True
    assert type(user).objects.get(pk=user.pk).password_hash == stronger


# -- unknown user: same hashing cost, None ---------------------------------------------------------
class _Pbkdf2Spy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.iterations: list[int] = []
        original = django_hashers.pbkdf2

        def spy(password: Any, salt: Any, iterations: int, *args: Any, **kwargs: Any) -> bytes:
            self.iterations.append(iterations)
            return original(password, salt, iterations, *args, **kwargs)

        monkeypatch.setattr(django_hashers, "pbkdf2", spy)


@pytest.mark.django_db
def test_attempt_for_unknown_user_returns_none() -> None:
    assert AuthManager().attempt_sync("nobody@example.com", "whatever") is None


@pytest.mark.django_db
def test_attempt_for_unknown_user_calls_the_dummy_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    from appframework.auth import manager as manager_module
    from appframework.auth import passwords as passwords_module

    calls: list[str] = []
    original = passwords_module.burn_hash_time

    def counting(password: str) -> None:
        calls.append(password)
        original(password)

    monkeypatch.setattr(passwords_module, "burn_hash_time", counting)
    monkeypatch.setattr(manager_module, "burn_hash_time", counting, raising=False)

    assert AuthManager().attempt_sync("nobody@example.com", "whatever") is None
    assert calls == ["whatever"]


@pytest.mark.django_db
def test_attempt_for_unknown_user_runs_one_full_cost_hash_like_a_known_user(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Pbkdf2Spy(monkeypatch)
    assert AuthManager().attempt_sync(user.email, "wrong password") is None
    known = list(spy.iterations)
    spy.iterations.clear()

    assert AuthManager().attempt_sync("nobody@example.com", "wrong password") is None
    unknown = list(spy.iterations)

    assert known == [PBKDF2PasswordHasher.iterations]
    assert unknown == known


@pytest.mark.django_db
def test_check_password_rehashes_a_hash_with_a_short_legacy_salt(user: Any) -> None:
    hasher = PBKDF2PasswordHasher()
    user.password_hash = hasher.encode(
        "legacy salt", "shortsalt", iterations=PBKDF2PasswordHasher.iterations
    )
    user.save()

    assert user.check_password("legacy salt") is True

    stored = type(user).objects.get(pk=user.pk).password_hash
    assert len(stored.split("$")[2]) >= 22
    assert verify_password("legacy salt", stored)
