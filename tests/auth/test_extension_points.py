"""Swappable classes and the session-engine check."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.test import override_settings

from appframework.auth import TokenManager
from appframework.auth.checks import check_session_engine
from appframework.container import container


class CountingTokenManager(TokenManager):
    issued = 0

    def issue(self, user: Any, **kwargs: Any) -> str:
        type(self).issued += 1
        return super().issue(user, **kwargs)


@pytest.fixture
def restore_token_manager() -> Iterator[None]:
    original = container.resolve(TokenManager)
    try:
        yield
    finally:
        container.bind(TokenManager, original)


def test_default_token_manager_is_the_suites(restore_token_manager: None) -> None:
    assert type(container.resolve(TokenManager)) is TokenManager


@pytest.mark.django_db
def test_token_manager_setting_swaps_the_class_bound_in_the_container(
    restore_token_manager: None, user: Any
) -> None:
    path = f"{__name__}.CountingTokenManager"
    with override_settings(APPFRAMEWORK={"AUTH": {"TOKEN_MANAGER": path}}):
        apps.get_app_config("appframework_auth").ready()
        manager = container.resolve(TokenManager)
        assert isinstance(manager, CountingTokenManager)
        token = manager.issue(user)
        assert CountingTokenManager.issued == 1
        assert manager.verify_sync(token) == user


def test_plain_signed_cookie_engine_gets_the_revocation_warning() -> None:
    with override_settings(SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies"):
        messages = check_session_engine()
    assert [m.id for m in messages] == ["appframework.W020"]
    assert "appframework.auth.session_store" in (messages[0].hint or "")


def test_suites_session_engine_passes_the_check() -> None:
    assert check_session_engine() == []
