"""Authentication behaviours added after review: odd credentials never 500, re-hashing
keeps sessions and tokens, a new password revokes them, async password checks."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client

from appframework.auth import AuthManager, TokenManager, hash_password, verify_password
from appframework.container import container

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("odd", ["\ud800", "pass\udfffword"], ids=["alone", "inside"])
def test_lone_surrogate_password_is_a_failed_login_for_unknown_and_known_users(
    user: Any, odd: str
) -> None:
    manager = container.resolve(AuthManager)
    assert manager.attempt_sync("nobody@example.com", odd) is None
    assert manager.attempt_sync(user.email, odd) is None
    assert verify_password(odd, user.password_hash) is False


def test_nul_in_username_is_a_failed_login_not_a_database_error(user: Any) -> None:
    assert container.resolve(AuthManager).attempt_sync("a\x00b@example.com", "x") is None


def test_login_form_with_nul_in_email_answers_401_not_500(user: Any) -> None:
    response = Client().post("/login", {"email": "a\x00b@example.com", "password": "x"})
    assert response.status_code == 401


def test_surrogate_username_is_a_failed_login(user: Any) -> None:
    assert container.resolve(AuthManager).attempt_sync("\ud800@example.com", "x") is None


async def test_acheck_password_checks_the_configured_column(user: Any, password: str) -> None:
    assert await user.acheck_password(password) is True
    assert await user.acheck_password("wrong") is False


def test_rehash_at_login_keeps_api_tokens_and_sessions(user: Any, password: str) -> None:
    manager = container.resolve(TokenManager)
    token = manager.issue(user)
    client = Client()
    client.force_login(user, backend="appframework.auth.AuthManager")
    before = user.password_hash
    PBKDF2PasswordHasher.iterations += 1  # a newer Django raises the count
    try:
        assert user.check_password(password)
    finally:
        PBKDF2PasswordHasher.iterations -= 1
    user.refresh_from_db()
    assert user.password_hash != before  # re-hashed and saved
    assert manager.verify_sync(token) == user
    assert client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_new_password_revokes_tokens_and_other_sessions(user: Any) -> None:
    manager = container.resolve(TokenManager)
    token = manager.issue(user)
    client = Client()
    client.force_login(user, backend="appframework.auth.AuthManager")
    user.set_password("a brand new password")
    user.save()
    assert manager.verify_sync(token) is None
    assert client.get("/").context["me"] is None


def test_hash_password_refuses_lone_surrogates_with_value_error() -> None:
    with pytest.raises(ValueError):
        hash_password("\ud800")


def test_login_attempt_on_an_sso_only_account_spends_one_hash(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr("appframework.auth.manager.burn_hash_time", calls.append)
    user.set_unusable_password()
    user.save()
    assert container.resolve(AuthManager).attempt_sync(user.email, "anything") is None
    assert calls == ["anything"]


def test_wrong_password_against_an_older_cheaper_hash_is_hardened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = PBKDF2PasswordHasher().encode("secret", "saltsaltsaltsaltsaltsa", iterations=10)
    hardened: list[str] = []
    monkeypatch.setattr(
        PBKDF2PasswordHasher, "harden_runtime", lambda self, pw, enc: hardened.append(enc)
    )
    assert verify_password("wrong", old) is False
    assert hardened == [old]
    assert verify_password("secret", old) is True
    assert hardened == [old]  # a correct password is not slowed down
