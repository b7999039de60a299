"""System checks of the AuthServiceProvider (docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import FieldDoesNotExist

from ..backends import backend_path
from ..checks import check_error, check_warning
from ..conf import AUTO, app_settings
from ..env import SESSION_STORE


def check_backend(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E003: AuthManager must be an authentication backend."""
    from .manager import AuthManager

    if backend_path(AuthManager) is not None:
        return []
    return [
        check_error(
            "appframework.E003",
            "appframework.auth.AuthManager is not in AUTHENTICATION_BACKENDS.",
            "Add 'appframework.auth.AuthManager' to AUTHENTICATION_BACKENDS.",
        )
    ]


def check_backend_order(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E009: a password backend on the same users listed before AuthManager."""
    from django.conf import settings
    from django.contrib.auth.backends import ModelBackend
    from django.utils.module_loading import import_string

    from .manager import AuthManager

    earlier: list[str] = []
    for path in settings.AUTHENTICATION_BACKENDS:
        try:
            backend = import_string(path)
        except ImportError:
            continue  # Django reports it at first use
        if isinstance(backend, type) and issubclass(backend, AuthManager):
            break
        if isinstance(backend, type) and issubclass(backend, ModelBackend):
            earlier.append(str(path))
    else:
        return []  # no AuthManager at all: E003
    return [
        check_error(
            "appframework.E009",
            f"{path} is listed before appframework.auth.AuthManager in "
            "AUTHENTICATION_BACKENDS: Django's authenticate() would sign a user with TOTP "
            "on or a passkey in with the password alone, past the suite's throttle.",
            "Put appframework.auth.AuthManager first. A ModelBackend listed after it is "
            "never asked about passwords; it only keeps signed-in the sessions created "
            "before the suite was installed (docs/adopting.md).",
        )
        for path in earlier
    ]


def check_user_model(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E004: the user model has the configured columns and mixes in Authenticatable."""
    from django.contrib.auth import get_user_model

    from .mixins import Authenticatable, password_field_of, username_field_of

    try:
        model = get_user_model()
    except Exception as exc:  # an unresolvable AUTH_USER_MODEL is Django's own check
        return [
            check_error(
                "appframework.E004", f"Cannot load the user model: {exc}", "Fix AUTH_USER_MODEL."
            )
        ]
    errors: list[checks.CheckMessage] = []
    if not issubclass(model, Authenticatable):
        errors.append(
            check_error(
                "appframework.E004",
                f"{model.__name__} does not mix in appframework.auth.Authenticatable.",
                "Add Authenticatable first among the user model's bases.",
                obj=model,
            )
        )
    fields = {
        "USERNAME_FIELD": username_field_of(model),
        "PASSWORD_FIELD": password_field_of(model),
    }
    for key, name in fields.items():
        try:
            model._meta.get_field(name)
        except FieldDoesNotExist:
            configured = getattr(app_settings.AUTH, key) is not AUTO
            where = (
                f"APPFRAMEWORK['AUTH'][{key!r}]" if configured else f"the model's default for {key}"
            )
            errors.append(
                check_error(
                    "appframework.E004",
                    f"{model.__name__} has no field {name!r} ({where}).",
                    f"Add the column, or set APPFRAMEWORK['AUTH'][{key!r}] to a field of "
                    f"{model.__name__} (or leave it unset to follow the model).",
                    obj=model,
                )
            )
    return errors


_PLAIN_SIGNED = "django.contrib.sessions.backends.signed_cookies"


def check_session_engine(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W020: Django's plain signed-cookie engine cannot end a kept copy of a cookie."""
    from django.conf import settings

    if getattr(settings, "SESSION_ENGINE", None) != _PLAIN_SIGNED:
        return []
    return [
        check_warning(
            "appframework.W020",
            "SESSION_ENGINE is Django's signed_cookies: after logout a kept copy of the "
            "session cookie stays valid until it expires.",
            f"Set SESSION_ENGINE = {SESSION_STORE!r} (the same cookies, plus a record of "
            "ended sessions on the cache).",
        )
    ]
