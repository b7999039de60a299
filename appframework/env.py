"""Turn appframework's environment variables (docs/settings.md) into Django settings.

Call it last in ``settings.py``::

    from appframework.env import apply_environment
    apply_environment(globals())

A setting already present in the module wins over the environment. An unparseable
value raises ``ImproperlyConfigured`` naming the variable, so the process fails at
start-up rather than at the first request.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

#: The session engine apply_environment() defaults to (signed cookies + ended-session record).
SESSION_STORE = "appframework.auth.session_store"

__all__ = ["apply_environment", "parse_bool", "parse_seconds"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"Environment variable {name}={raw!r} is not a boolean; use one of "
        "true/false, 1/0, yes/no, on/off."
    )


def parse_seconds(name: str, raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(
            f"Environment variable {name}={raw!r} is not a whole number of seconds."
        ) from None
    if value < 0:
        raise ImproperlyConfigured(f"Environment variable {name}={raw!r} must not be negative.")
    return value


def parse_name(name: str, raw: str) -> str:
    value = raw.strip()
    if not value or any(c in value for c in " \t\r\n;,="):
        raise ImproperlyConfigured(
            f"Environment variable {name}={raw!r} is not a valid cookie or header name."
        )
    return value


def _text(name: str, raw: str) -> str:
    return raw


def _secret(name: str, raw: str) -> str:
    if not raw:
        raise ImproperlyConfigured(f"Environment variable {name} is set but empty.")
    return raw


# variable -> (where it goes, parser, default or None for "leave unset").
# A target is a Django setting name, or (section, key) inside APPFRAMEWORK.
Target = str | tuple[str, str]
_VARIABLES: tuple[tuple[str, tuple[Target, ...], Callable[[str, str], Any], Any], ...] = (
    ("APP_SECRET_KEY", ("SECRET_KEY",), _secret, None),
    ("SESSION_COOKIE_NAME", ("SESSION_COOKIE_NAME",), parse_name, None),
    ("SESSION_MAX_AGE", ("SESSION_COOKIE_AGE",), parse_seconds, 14 * 24 * 3600),
    ("SESSION_HTTPS_ONLY", ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"), parse_bool, False),
    ("CSRF_ENABLED", (("CSRF", "ENABLED"),), parse_bool, True),
    # Django's setting first: a project's own CSRF_COOKIE_NAME wins and the suite follows.
    ("CSRF_COOKIE_NAME", ("CSRF_COOKIE_NAME", ("CSRF", "COOKIE_NAME")), parse_name, "csrf_token"),
    ("CSRF_HEADER_NAME", (("CSRF", "HEADER_NAME"),), parse_name, "X-CSRF-Token"),
    ("API_TOKEN_EXPIRES_IN", (("AUTH", "API_TOKEN_EXPIRES_IN"),), parse_seconds, 30 * 24 * 3600),
    ("SECURITY_HEADERS_CSP", (("SECURITY_HEADERS", "CSP"),), _text, None),
    ("SECURITY_HEADERS_FRAME_OPTIONS", (("SECURITY_HEADERS", "FRAME_OPTIONS"),), _text, "DENY"),
    (
        "SECURITY_HEADERS_CONTENT_TYPE_OPTIONS",
        (("SECURITY_HEADERS", "CONTENT_TYPE_OPTIONS"),),
        parse_bool,
        True,
    ),
    (
        "SECURITY_HEADERS_REFERRER_POLICY",
        (("SECURITY_HEADERS", "REFERRER_POLICY"),),
        _text,
        "strict-origin-when-cross-origin",
    ),
    ("SECURITY_HEADERS_HSTS", (("SECURITY_HEADERS", "HSTS"),), parse_bool, False),
    (
        "SECURITY_HEADERS_HSTS_MAX_AGE",
        (("SECURITY_HEADERS", "HSTS_MAX_AGE"),),
        parse_seconds,
        31536000,
    ),
)

ENVIRONMENT_VARIABLES: tuple[str, ...] = tuple(v[0] for v in _VARIABLES)


def apply_environment(
    namespace: MutableMapping[str, Any], environ: Mapping[str, str] | None = None
) -> MutableMapping[str, Any]:
    """Fill ``namespace`` (a settings module's ``globals()``) from ``environ``.

    Django settings and APPFRAMEWORK keys already in ``namespace`` are left alone.
    Also defaults ``SESSION_ENGINE`` to ``appframework.auth.session_store``: signed-cookie
    sessions (no server-side store) whose logout also ends any kept copy of the cookie.
    """
    env = os.environ if environ is None else environ
    app = namespace.setdefault("APPFRAMEWORK", {})
    if not isinstance(app, dict):
        raise ImproperlyConfigured("settings.APPFRAMEWORK must be a dict.")
    for variable, targets, parse, default in _VARIABLES:
        raw = env.get(variable)
        value = parse(variable, raw) if raw is not None else default
        if raw is None and default is None:
            continue
        # A target the settings already set decides the effective value (the first such,
        # in order: Django's setting before ours); the others follow it, so e.g. ours
        # never drifts from Django's CSRF_COOKIE_NAME, whichever of the two was set.
        for target in targets:
            container = app.get(target[0], {}) if isinstance(target, tuple) else namespace
            key = target[1] if isinstance(target, tuple) else target
            if key in container:
                value = container[key]
                break
        for target in targets:
            if isinstance(target, tuple):
                app.setdefault(target[0], {}).setdefault(target[1], value)
            else:
                namespace.setdefault(target, value)
    namespace.setdefault("SESSION_ENGINE", SESSION_STORE)
    return namespace
