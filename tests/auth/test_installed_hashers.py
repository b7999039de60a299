"""Hashes of every hasher in Django's PASSWORD_HASHERS verify through the mixin's
check_password, are upgraded to the suite's PBKDF2 on success, and count as usable;
verify_password keeps to the suite's own PBKDF2; a hash asking for absurd work is
refused without running it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.hashers import get_hashers, make_password
from django.test import override_settings

from appframework.auth import verify_installed_password, verify_password

pytestmark = pytest.mark.django_db

PASSWORD = "pre-adoption passphrase"
HASHERS = ["pbkdf2_sha1", "argon2", "bcrypt_sha256", "scrypt"]


@pytest.mark.parametrize("hasher", HASHERS)
def test_an_installed_hashers_hash_verifies_and_verify_password_keeps_its_contract(
    hasher: str,
) -> None:
    encoded = make_password(PASSWORD, hasher=hasher)
    assert verify_installed_password(PASSWORD, encoded)
    assert not verify_installed_password("wrong", encoded)
    assert not verify_password(PASSWORD, encoded)  # PBKDF2-SHA256 only, as documented


@pytest.mark.parametrize("hasher", HASHERS)
def test_check_password_signs_in_and_upgrades_the_hash_once(user: Any, hasher: str) -> None:
    user.password_hash = make_password(PASSWORD, hasher=hasher)
    user.save()
    assert user.has_usable_password()
    assert not user.check_password("wrong")
    assert user.password_hash.startswith(f"{hasher}$")
    assert user.check_password(PASSWORD)
    user.refresh_from_db()
    assert user.password_hash.startswith("pbkdf2_sha256$")
    assert user.check_password(PASSWORD)


def test_a_hasher_taken_out_of_password_hashers_no_longer_verifies(user: Any) -> None:
    encoded = make_password(PASSWORD, hasher="scrypt")
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"]):
        assert not verify_installed_password(PASSWORD, encoded)
        user.password_hash = encoded
        assert not user.has_usable_password()


@pytest.mark.parametrize(
    "hostile",
    [
        # argon2 asking for 4 GiB of memory
        "argon2$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$" + "A" * 43,
        # bcrypt at 2**31 rounds
        "bcrypt_sha256$$2b$31$" + "a" * 53,
        # scrypt with N = 2**30
        "scrypt$1073741824$salt$8$1$" + "A" * 86,
        # PBKDF2-SHA1 with 10**12 iterations
        "pbkdf2_sha1$1000000000000$salt$" + "A" * 28,
    ],
)
def test_a_hash_asking_for_absurd_work_is_refused_unchecked(
    hostile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for hasher in get_hashers():

        def never(self: Any, password: str, encoded: str) -> bool:
            raise AssertionError(f"{self.algorithm} ran on a hostile hash")

        monkeypatch.setattr(type(hasher), "verify", never)
    assert not verify_installed_password(PASSWORD, hostile)


@pytest.mark.parametrize("encoded", ["", "!", "!unusable", "md5$salt$abc", "garbage"])
def test_unusable_and_unknown_values_are_not_usable(user: Any, encoded: str) -> None:
    user.password_hash = encoded
    assert not user.has_usable_password()
    assert not user.check_password(PASSWORD)
