"""Checks ``appframework_passkeys.E001``, ``E002``, ``E003``, ``W001`` and ``W002``
(docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

from ..checks import check_error, check_warning
from ..conf import app_settings
from ..sso_config import sessions_ready, store_setting_problem

_USER_VERIFICATION = ("required", "preferred", "discouraged")


def check_sessions(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E001: challenges live in the session, and signing in needs ``appframework.auth``."""
    if sessions_ready():
        return []
    return [
        check_error(
            "appframework_passkeys.E001",
            "Passkeys need the session machinery: SessionMiddleware in MIDDLEWARE and "
            "'appframework.auth' in INSTALLED_APPS.",
            "Add both.",
        )
    ]


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _origins() -> list[str]:
    value = app_settings.PASSKEYS.ORIGINS
    return [value] if isinstance(value, str) else list(value or ())


def _setting_problems() -> list[str]:
    section = app_settings.PASSKEYS
    problems = []
    rp_id = section.RP_ID
    if rp_id is not None and (
        not isinstance(rp_id, str) or not rp_id or "/" in rp_id or ":" in rp_id
    ):
        problems.append("RP_ID must be None or a domain name (no scheme, port or path)")
    if section.RP_NAME is not None and not isinstance(section.RP_NAME, str):
        problems.append("RP_NAME must be None or a string")
    if isinstance(section.ORIGINS, str) or not isinstance(section.ORIGINS, list | tuple):
        problems.append("ORIGINS must be a list of origins")
    else:
        for origin in section.ORIGINS:
            parts = urlsplit(origin) if isinstance(origin, str) else None
            if (
                parts is None
                or parts.scheme not in ("https", "http")
                or not parts.hostname
                or parts.path not in ("", "/")
            ):
                problems.append(
                    f"ORIGINS entry {origin!r} is not an origin like https://example.com"
                )
    if section.USER_VERIFICATION not in _USER_VERIFICATION:
        problems.append("USER_VERIFICATION must be 'required', 'preferred' or 'discouraged'")
    for key in ("CHALLENGE_TIMEOUT", "LOGIN_ATTEMPTS", "LOGIN_WINDOW"):
        if not _positive_int(getattr(section, key)):
            problems.append(f"{key} must be a positive integer")
    problem = store_setting_problem("CHALLENGE_CACHE", section.CHALLENGE_CACHE)
    if problem:
        problems.append(problem)
    return problems


def check_settings(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E002: a bad value in ``PASSKEYS``."""
    return [
        check_error(
            "appframework_passkeys.E002",
            f"APPFRAMEWORK['PASSKEYS']: {problem}.",
            "Fix the value named.",
        )
        for problem in _setting_problems()
    ]


def _within(host: str, rp_id: str) -> bool:
    return host == rp_id or host.endswith("." + rp_id)


def _allowed_host_matches(host: str) -> bool:
    for pattern in settings.ALLOWED_HOSTS:
        pattern = pattern.lower()
        if pattern == "*" or pattern == host:
            return True
        if pattern.startswith(".") and (host == pattern[1:] or host.endswith(pattern)):
            return True
    return False


def check_relying_party(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E003: an origin outside RP_ID (browsers refuse every ceremony there). W001:
    RP_ID or an origin that ALLOWED_HOSTS / CSRF_TRUSTED_ORIGINS would never let in."""
    if _setting_problems():
        return []  # E002 says what to fix first
    section = app_settings.PASSKEYS
    rp_id = section.RP_ID.lower() if section.RP_ID else None
    messages: list[checks.CheckMessage] = []
    trusted = {o.rstrip("/").lower() for o in getattr(settings, "CSRF_TRUSTED_ORIGINS", ())}
    for origin in _origins():
        host = (urlsplit(origin).hostname or "").lower()
        if rp_id is not None and not _within(host, rp_id):
            messages.append(
                check_error(
                    "appframework_passkeys.E003",
                    f"PASSKEYS origin {origin!r} is not on RP_ID {rp_id!r} or a subdomain of "
                    "it: browsers refuse every passkey ceremony there.",
                    "List only origins on RP_ID (or change RP_ID to their common domain).",
                )
            )
        elif not _allowed_host_matches(host) and origin.rstrip("/").lower() not in trusted:
            messages.append(
                check_warning(
                    "appframework_passkeys.W001",
                    f"PASSKEYS origin {origin!r}: its host is not in ALLOWED_HOSTS and the "
                    "origin is not in CSRF_TRUSTED_ORIGINS, so no ceremony from it reaches "
                    "a view.",
                    "Add the host to ALLOWED_HOSTS (or the origin to CSRF_TRUSTED_ORIGINS), "
                    "or remove the origin.",
                )
            )
    hosts = [h.lower().lstrip(".") for h in settings.ALLOWED_HOSTS if h != "*"]
    if rp_id is not None and hosts and not any(_within(h, rp_id) for h in hosts):
        messages.append(
            check_warning(
                "appframework_passkeys.W001",
                f"PASSKEYS RP_ID {rp_id!r} is neither a host of ALLOWED_HOSTS nor a parent "
                "domain of one: no page of this site can use passkeys bound to it.",
                "Set RP_ID to this site's domain (or a parent domain of its hosts).",
            )
        )
    return messages


def check_rp_id_set(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """W002 (deploy): without RP_ID each host has passkeys of its own."""
    if app_settings.PASSKEYS.RP_ID:
        return []
    return [
        check_warning(
            "appframework_passkeys.W002",
            "PASSKEYS RP_ID is not set: passkeys are bound to the host each was made on, "
            "so one registered on www.example.com does not work on example.com.",
            "Set RP_ID to the site's registrable domain, and ORIGINS to its origins.",
        )
    ]
