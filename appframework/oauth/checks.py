"""Checks ``appframework_oauth.E001``, ``E002`` and ``W001`` (docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks

from ..checks import check_error, check_warning
from ..conf import app_settings
from ..sso_config import sessions_ready, shared_setting_problems


def check_sessions(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E001: the state lives in the session, and signing in needs ``appframework.auth``."""
    if sessions_ready():
        return []
    return [
        check_error(
            "appframework_oauth.E001",
            "OAuth login needs the session machinery: SessionMiddleware in MIDDLEWARE and "
            "'appframework.auth' in INSTALLED_APPS.",
            "Add both.",
        )
    ]


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def check_settings(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E002: a bad value in ``OAUTH``; W001: no TOTP code form to send SSO users to."""
    from .types import OAuthProvider

    section = app_settings.OAUTH
    problems = shared_setting_problems("OAUTH", OAuthProvider, "STATE_CACHE")
    if not _positive(section.TIMEOUT):
        problems.append("TIMEOUT must be a positive number of seconds")
    if not _positive(section.STATE_TTL) or not isinstance(section.STATE_TTL, int):
        problems.append("STATE_TTL must be a positive number of seconds")
    messages: list[checks.CheckMessage] = [
        check_error(
            "appframework_oauth.E002",
            f"APPFRAMEWORK['OAUTH']: {problem}.",
            "Fix the value named.",
        )
        for problem in problems
    ]
    if section.MFA and app_settings.MFA.CHALLENGE_URL is None:
        messages.append(
            check_warning(
                "appframework_oauth.W001",
                "Users with TOTP on who sign in through a provider are sent to LOGIN_URL for "
                "their code, because APPFRAMEWORK['MFA']['CHALLENGE_URL'] is not set.",
                "Set MFA.CHALLENGE_URL to the view that calls complete_challenge().",
            )
        )
    return messages
