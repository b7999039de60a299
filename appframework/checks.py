"""System checks of the core (ids ``appframework.E0xx`` / ``W0xx``; docs/checks.md).

Ids are stable: a retired check keeps its id reserved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from .conf import app_settings

_DOCS = "See docs/checks.md#{id}."

SESSION_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
DJANGO_CSRF_MIDDLEWARE = "django.middleware.csrf.CsrfViewMiddleware"
CSRF_MIDDLEWARE = "appframework.security.CsrfMiddleware"
ERROR_MIDDLEWARE = "appframework.middleware.ErrorMiddleware"
AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


def _error(id_: str, msg: str, hint: str, obj: Any = None) -> checks.Error:
    return checks.Error(
        msg, hint=f"{hint} {_DOCS.format(id=id_.replace('.', '-'))}", obj=obj, id=id_
    )


def _warning(id_: str, msg: str, hint: str, obj: Any = None) -> checks.Warning:
    return checks.Warning(
        msg, hint=f"{hint} {_DOCS.format(id=id_.replace('.', '-'))}", obj=obj, id=id_
    )


def middleware_index(cls_path: str) -> int | None:
    """Position in MIDDLEWARE of ``cls_path`` or of any entry importing to the same class."""
    try:
        target = import_string(cls_path)
    except ImportError:
        target = None
    for index, entry in enumerate(getattr(settings, "MIDDLEWARE", None) or ()):
        if entry == cls_path:
            return index
        try:
            if target is not None and import_string(entry) is target:
                return index
        except ImportError:
            continue
    return None


def _sessions_used() -> bool:
    return middleware_index(SESSION_MIDDLEWARE) is not None or apps.is_installed(
        "appframework.auth"
    )


@checks.register(checks.Tags.security)
def check_secret_key(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E001: sessions in use without a secret."""
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:
        secret = ""
    if _sessions_used() and not secret:
        return [
            _error(
                "appframework.E001",
                "Sessions are in use but no secret key is set.",
                "Set the APP_SECRET_KEY environment variable (or SECRET_KEY).",
            )
        ]
    return []


@checks.register()
def check_settings(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E002: APPFRAMEWORK has unknown keys, bad import strings or bad values."""
    errors: list[checks.CheckMessage] = []
    try:
        auth = app_settings.AUTH
        auth.CSRF_EXEMPT  # noqa: B018 - resolves the import string
    except (ImproperlyConfigured, AttributeError) as exc:
        return [_error("appframework.E002", str(exc), "Fix the APPFRAMEWORK setting.")]
    for key in ("API_TOKEN_EXPIRES_IN",):
        value = getattr(auth, key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            errors.append(
                _error(
                    "appframework.E002",
                    f"APPFRAMEWORK['AUTH'][{key!r}] must be a positive number of seconds, got {value!r}.",
                    "Use an int.",
                )
            )
    iterations = auth.PASSWORD_ITERATIONS
    if not isinstance(iterations, int) or iterations < 0:
        errors.append(
            _error(
                "appframework.E002",
                f"APPFRAMEWORK['AUTH']['PASSWORD_ITERATIONS'] must be a non-negative int, got {iterations!r}.",
                "Use 0 for the running Django's default.",
            )
        )
    if auth.CSRF_EXEMPT is not None and not callable(auth.CSRF_EXEMPT):
        errors.append(
            _error(
                "appframework.E002",
                "APPFRAMEWORK['AUTH']['CSRF_EXEMPT'] must name a callable predicate(request) -> bool.",
                "Give a dotted path to a function.",
            )
        )
    return errors


@checks.register()
def check_middleware(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E005, W001, W002, W003: the middleware stack around the CSRF middleware."""
    messages: list[checks.CheckMessage] = []
    csrf = middleware_index(CSRF_MIDDLEWARE)
    session = middleware_index(SESSION_MIDDLEWARE)
    if csrf is not None and (session is None or session > csrf):
        messages.append(
            _error(
                "appframework.E005",
                "appframework's CsrfMiddleware needs SessionMiddleware before it.",
                f"Put {SESSION_MIDDLEWARE!r} above {CSRF_MIDDLEWARE!r} in MIDDLEWARE.",
            )
        )
    auth_installed = apps.is_installed("appframework.auth")
    if auth_installed and csrf is None and app_settings.CSRF.ENABLED:
        messages.append(
            _error(
                "appframework.E006",
                "The AuthServiceProvider is installed but appframework's CsrfMiddleware is not: "
                "cookie sessions would have no CSRF protection.",
                f"Add {CSRF_MIDDLEWARE!r} after SessionMiddleware, or set "
                "APPFRAMEWORK['CSRF']['ENABLED'] = False (CSRF_ENABLED=false) deliberately.",
            )
        )
    if auth_installed and middleware_index(AUTH_MIDDLEWARE) is None:
        messages.append(
            _warning(
                "appframework.W004",
                "The AuthServiceProvider is installed without AuthenticationMiddleware: "
                "request.user is missing and current_user() reads the session on every call.",
                f"Add {AUTH_MIDDLEWARE!r} after SessionMiddleware.",
            )
        )
    if csrf is not None and middleware_index(DJANGO_CSRF_MIDDLEWARE) is not None:
        messages.append(
            _warning(
                "appframework.W001",
                "Both Django's CsrfViewMiddleware and appframework's CsrfMiddleware are installed.",
                f"Remove {DJANGO_CSRF_MIDDLEWARE!r}; appframework's middleware replaces it.",
            )
        )
    if auth_installed and middleware_index(ERROR_MIDDLEWARE) is None:
        messages.append(
            _warning(
                "appframework.W002",
                "ErrorMiddleware is not installed: UnauthorizedException answers 403 and "
                "ValidationException/TooManyRequestsException 400 instead of 401/422/429.",
                f"Add {ERROR_MIDDLEWARE!r} to MIDDLEWARE.",
            )
        )
    if csrf is not None and settings.CSRF_COOKIE_NAME != app_settings.CSRF.COOKIE_NAME:
        messages.append(
            _warning(
                "appframework.W003",
                f"CSRF_COOKIE_NAME ({settings.CSRF_COOKIE_NAME!r}) differs from the suite's CSRF "
                f"cookie ({app_settings.CSRF.COOKIE_NAME!r}); views under Django's @csrf_protect "
                "(the admin) would set a second cookie.",
                "Call appframework.env.apply_environment(globals()) in settings.py, or set both.",
            )
        )
    return messages
