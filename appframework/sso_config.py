"""What the single sign-on apps (``appframework.oauth``, ``appframework.saml``) read from
settings the same way: the provider list, and the checks of their shared keys."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .checks import SESSION_MIDDLEWARE, middleware_index
from .conf import AUTO, app_settings, import_from_setting

__all__ = [
    "named_providers",
    "sessions_ready",
    "shared_setting_problems",
    "store_setting_problem",
    "validate_provider_fields",
]

# A provider's name is a URL segment, matched by the routes and by is_saml_acs_request.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,50}")

P = TypeVar("P")


def named_providers(section: str, cls: type[P]) -> dict[str, P]:
    """``APPFRAMEWORK[section]["PROVIDERS"]`` by name: a list of ``cls`` objects, one
    object, or the import string of a function returning them (called here)."""
    value: Any = getattr(app_settings, section).PROVIDERS
    if isinstance(value, str):
        factory = import_from_setting(value, section, "PROVIDERS")
        value = factory() if callable(factory) else factory
    if isinstance(value, cls):
        value = [value]
    providers: dict[str, P] = {}
    for item in value or ():
        if not isinstance(item, cls):
            raise ImproperlyConfigured(
                f"APPFRAMEWORK[{section!r}]['PROVIDERS'] must hold {cls.__name__} objects, "
                f"not {item!r}."
            )
        name = item.name  # type: ignore[attr-defined]
        if name in providers:
            raise ImproperlyConfigured(f"Two {section} providers are named {name!r}.")
        providers[name] = item
    return providers


def sessions_ready() -> bool:
    """Signing in needs SessionMiddleware and the auth app."""
    return middleware_index(SESSION_MIDDLEWARE) is not None and apps.is_installed(
        "appframework.auth"
    )


def store_setting_problem(key: str, value: Any) -> str | None:
    """What is wrong with a store setting's value (``AUTO`` or an alias of ``CACHES``),
    or None."""
    if value is AUTO:
        return None
    if not isinstance(value, str) or value not in getattr(settings, "CACHES", {}):
        return f"{key} {value!r} is not AUTO or an alias in CACHES"
    return None


def shared_setting_problems(section: str, cls: type, cache_key: str) -> list[str]:
    """Problems with ``PROVIDERS``, the cache alias named by ``cache_key`` and
    ``USER_HANDLER`` of ``APPFRAMEWORK[section]`` (checks must not call a provider
    factory: it may reach the network)."""
    values = getattr(app_settings, section)
    problems: list[str] = []
    providers = values.PROVIDERS
    if isinstance(providers, cls):
        providers = [providers]
    if isinstance(providers, list | tuple):
        if any(not isinstance(p, cls) for p in providers):
            problems.append(f"PROVIDERS must hold {cls.__name__} objects")
        names = [p.name for p in providers if isinstance(p, cls)]  # type: ignore[attr-defined]
        if len(names) != len(set(names)):
            problems.append("two PROVIDERS share a name")
    elif not isinstance(providers, str):
        problems.append(f"PROVIDERS must be a list of {cls.__name__} or an import string")
    problem = store_setting_problem(cache_key, getattr(values, cache_key))
    if problem:
        problems.append(problem)
    try:
        if not callable(values.USER_HANDLER):
            problems.append("USER_HANDLER is not callable")
    except ImproperlyConfigured as exc:
        problems.append(str(exc))
    return problems


def validate_provider_fields(provider: Any, url_fields: Iterable[str]) -> None:
    """``ValueError`` unless ``provider.name`` is an ASCII URL segment and each of
    ``url_fields`` is an absolute http(s) URL."""
    kind = type(provider).__name__
    name = provider.name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"{kind}.name must be letters, digits, '-' or '_' in ASCII (a URL segment), "
            f"not {name!r}."
        )
    for field in url_fields:
        value = getattr(provider, field)
        parts = urlsplit(value if isinstance(value, str) else "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{kind}.{field} must be an absolute http(s) URL, not {value!r}.")
