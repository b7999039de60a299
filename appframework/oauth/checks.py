"""Checks ``appframework_oauth.E001``, ``E002`` and ``W001`` (docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from ..checks import SESSION_MIDDLEWARE, _error, _warning, middleware_index
from ..conf import app_settings


def check_sessions(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E001: the state lives in the session, and signing in needs ``appframework.auth``."""
    if middleware_index(SESSION_MIDDLEWARE) is not None and apps.is_installed("appframework.auth"):
        return []
    return [
        _error(
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

    problems: list[str] = []
    section = app_settings.OAUTH
    providers = section.PROVIDERS
    if isinstance(providers, list | tuple):
        bad = [p for p in providers if not isinstance(p, OAuthProvider)]
        if bad:
            problems.append(f"PROVIDERS holds {bad[0]!r}, not an OAuthProvider")
        names = [p.name for p in providers if isinstance(p, OAuthProvider)]
        if len(names) != len(set(names)):
            problems.append("two PROVIDERS share a name")
    elif not isinstance(providers, str):
        problems.append("PROVIDERS must be a list of OAuthProvider or an import string")
    if not _positive(section.TIMEOUT):
        problems.append("TIMEOUT must be a positive number of seconds")
    if (
        not isinstance(section.STATE_TTL, int)
        or isinstance(section.STATE_TTL, bool)
        or section.STATE_TTL <= 0
    ):
        problems.append("STATE_TTL must be a positive number of seconds")
    if section.STATE_CACHE not in getattr(settings, "CACHES", {}):
        problems.append(f"STATE_CACHE {section.STATE_CACHE!r} is not an alias in CACHES")
    try:
        if not callable(section.USER_HANDLER):
            problems.append("USER_HANDLER is not callable")
    except ImproperlyConfigured as exc:
        problems.append(str(exc))
    messages: list[checks.CheckMessage] = [
        _error(
            "appframework_oauth.E002",
            f"APPFRAMEWORK['OAUTH']: {problem}.",
            "Fix the value named.",
        )
        for problem in problems
    ]
    if section.MFA and app_settings.MFA.CHALLENGE_URL is None:
        messages.append(
            _warning(
                "appframework_oauth.W001",
                "Users with TOTP on who sign in through a provider are sent to LOGIN_URL for "
                "their code, because APPFRAMEWORK['MFA']['CHALLENGE_URL'] is not set.",
                "Set MFA.CHALLENGE_URL to the view that calls complete_challenge().",
            )
        )
    return messages
