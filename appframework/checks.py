"""System checks of the core (ids ``appframework.E0xx`` / ``W0xx``; docs/checks.md).

Ids are stable: a retired check keeps its id reserved. E007, E008, W005 and W006 are deployment
checks: they run under ``manage.py check --deploy`` only, because a laptop is allowed a
throwaway key, plain-HTTP cookies and an in-process cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from .conf import AUTO, app_settings
from .security.cookie import csrf_cookie_name
from .stores import DUMMY_BACKEND, auto_alias, backend_class, is_process_local

DOCS_HINT = "See docs/checks.md#{id}."

SESSION_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
DJANGO_CSRF_MIDDLEWARE = "django.middleware.csrf.CsrfViewMiddleware"
CSRF_MIDDLEWARE = "appframework.security.CsrfMiddleware"
ERROR_MIDDLEWARE = "appframework.middleware.ErrorMiddleware"
AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


def check_error(id_: str, msg: str, hint: str, obj: Any = None) -> checks.Error:
    return checks.Error(
        msg, hint=f"{hint} {DOCS_HINT.format(id=id_.replace('.', '-'))}", obj=obj, id=id_
    )


def check_warning(id_: str, msg: str, hint: str, obj: Any = None) -> checks.Warning:
    return checks.Warning(
        msg, hint=f"{hint} {DOCS_HINT.format(id=id_.replace('.', '-'))}", obj=obj, id=id_
    )


def middleware_index(cls_path: str) -> int | None:
    """Position in MIDDLEWARE of ``cls_path`` or of any entry importing to the same class
    or a subclass of it (``appframework.headless.middleware.SessionMiddleware`` is a
    ``SessionMiddleware``)."""
    try:
        target = import_string(cls_path)
    except ImportError:
        target = None
    for index, entry in enumerate(getattr(settings, "MIDDLEWARE", None) or ()):
        if entry == cls_path:
            return index
        try:
            candidate = import_string(entry)
        except ImportError:
            continue
        if target is not None and (
            candidate is target
            or (
                isinstance(candidate, type)
                and isinstance(target, type)
                and issubclass(candidate, target)
            )
        ):
            return index
    return None


def _secret_key() -> str:
    """``SECRET_KEY``, or "" when it is unset (Django raises on access then)."""
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:
        return ""
    return secret if isinstance(secret, str) else ""


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
    if _sessions_used() and not _secret_key():
        return [
            check_error(
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
        return [check_error("appframework.E002", str(exc), "Fix the APPFRAMEWORK setting.")]
    for key in ("API_TOKEN_EXPIRES_IN",):
        value = getattr(auth, key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            errors.append(
                check_error(
                    "appframework.E002",
                    f"APPFRAMEWORK['AUTH'][{key!r}] must be a positive number of seconds, got {value!r}.",
                    "Use an int.",
                )
            )
    iterations = auth.PASSWORD_ITERATIONS
    if not isinstance(iterations, int) or iterations < 0:
        errors.append(
            check_error(
                "appframework.E002",
                f"APPFRAMEWORK['AUTH']['PASSWORD_ITERATIONS'] must be a non-negative int, got {iterations!r}.",
                "Use 0 for the running Django's default.",
            )
        )
    if auth.CSRF_EXEMPT is not None and not callable(auth.CSRF_EXEMPT):
        errors.append(
            check_error(
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
            check_error(
                "appframework.E005",
                "appframework's CsrfMiddleware needs SessionMiddleware before it.",
                f"Put {SESSION_MIDDLEWARE!r} above {CSRF_MIDDLEWARE!r} in MIDDLEWARE.",
            )
        )
    auth_installed = apps.is_installed("appframework.auth")
    if auth_installed and csrf is None and app_settings.CSRF.ENABLED:
        messages.append(
            check_error(
                "appframework.E006",
                "The AuthServiceProvider is installed but appframework's CsrfMiddleware is not: "
                "cookie sessions would have no CSRF protection.",
                f"Add {CSRF_MIDDLEWARE!r} after SessionMiddleware, or set "
                "APPFRAMEWORK['CSRF']['ENABLED'] = False (CSRF_ENABLED=false) deliberately.",
            )
        )
    if auth_installed and middleware_index(AUTH_MIDDLEWARE) is None:
        messages.append(
            check_warning(
                "appframework.W004",
                "The AuthServiceProvider is installed without AuthenticationMiddleware: "
                "request.user is missing and current_user() reads the session on every call.",
                f"Add {AUTH_MIDDLEWARE!r} after SessionMiddleware.",
            )
        )
    if csrf is not None and middleware_index(DJANGO_CSRF_MIDDLEWARE) is not None:
        messages.append(
            check_warning(
                "appframework.W001",
                "Both Django's CsrfViewMiddleware and appframework's CsrfMiddleware are installed.",
                f"Remove {DJANGO_CSRF_MIDDLEWARE!r}; appframework's middleware replaces it.",
            )
        )
    if auth_installed and middleware_index(ERROR_MIDDLEWARE) is None:
        messages.append(
            check_warning(
                "appframework.W002",
                "ErrorMiddleware is not installed: UnauthorizedException answers 403 and "
                "ValidationException/TooManyRequestsException 400 instead of 401/422/429.",
                f"Add {ERROR_MIDDLEWARE!r} to MIDDLEWARE.",
            )
        )
    if csrf is not None and csrf_cookie_name() != settings.CSRF_COOKIE_NAME:
        messages.append(
            check_warning(
                "appframework.W003",
                f"CSRF_COOKIE_NAME ({settings.CSRF_COOKIE_NAME!r}) differs from the suite's CSRF "
                f"cookie ({csrf_cookie_name()!r}); views under Django's @csrf_protect "
                "(the admin) would set a second cookie.",
                "Call appframework.env.apply_environment(globals()) in settings.py, or set both.",
            )
        )
    return messages


# -- deployment checks (manage.py check --deploy) ----------------------------------------------
#: Secret keys published somewhere: whoever knows one can forge sessions, CSRF tokens and
#: API tokens. The first is the key this repository's demo used to ship with.
KNOWN_SECRET_KEYS: frozenset[str] = frozenset(
    {"demo-only-insecure-key-do-not-deploy-0123456789abcdef"}
)
#: Django's startproject writes keys with this prefix into settings.py, i.e. into git.
INSECURE_KEY_PREFIX = "django-insecure-"


@checks.register(checks.Tags.security, deploy=True)
def check_demo_secret_key(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E007: SECRET_KEY is a published placeholder or a development key."""
    secret = _secret_key()
    if not secret:
        return []  # no key at all is E001's business
    if secret in KNOWN_SECRET_KEYS:
        problem = (
            "SECRET_KEY is a published placeholder: anyone who knows it can forge "
            "sessions, CSRF tokens and API tokens."
        )
    elif secret.startswith(INSECURE_KEY_PREFIX):
        problem = (
            f"SECRET_KEY starts with {INSECURE_KEY_PREFIX!r}: it is the development key "
            "startproject wrote into settings.py, so it lives in the repository and in "
            "every copy of it; whoever reads it can forge sessions, CSRF tokens and API "
            "tokens."
        )
    else:
        return []
    return [
        check_error(
            "appframework.E007",
            problem,
            "Set APP_SECRET_KEY to a long random value kept out of the repository, e.g. "
            "from django.core.management.utils.get_random_secret_key().",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_session_cookie_secure(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """E008: session cookies may travel over plain HTTP in production."""
    # DEBUG on means a development server, usually plain http://localhost, where a
    # Secure cookie would never come back; only a production configuration is refused.
    if settings.DEBUG or settings.SESSION_COOKIE_SECURE or not _sessions_used():
        return []
    return [
        check_error(
            "appframework.E008",
            "SESSION_COOKIE_SECURE is False with DEBUG off: the session cookie (the "
            "login itself) would also be sent over plain HTTP, readable on the network.",
            "Serve the site over HTTPS and set SESSION_HTTPS_ONLY=true (it sets "
            "SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE).",
        )
    ]


def cache_backend(alias: str) -> str:
    """The BACKEND path of cache ``alias`` ("" for an unknown alias: that fails loudly
    at first use and is not these checks' business)."""
    config = (getattr(settings, "CACHES", None) or {}).get(alias)
    return str(config.get("BACKEND", "")) if isinstance(config, dict) else ""


def resolved_alias(value: Any) -> str | None:
    """The cache alias a store setting's value uses: the alias named, or what ``AUTO``
    resolves to; None for the suite's database store, shared by every process."""
    return auto_alias() if value is AUTO else str(value)


def _store_settings() -> tuple[Any, Any] | None:
    """(REVOCATION_CACHE, RATE_LIMIT CACHE) as set, or None when APPFRAMEWORK is broken
    (E002)."""
    try:
        return app_settings.AUTH.REVOCATION_CACHE, app_settings.RATE_LIMIT.CACHE
    except (ImproperlyConfigured, AttributeError):
        return None


# (app, section, key, what it records): caches that make a value one-use across processes.
_REPLAY_CACHES = (
    ("appframework.oauth", "OAUTH", "STATE_CACHE", "spent sign-in states"),
    ("appframework.saml", "SAML", "REPLAY_CACHE", "SAML requests and accepted assertions"),
    ("appframework.passkeys", "PASSKEYS", "CHALLENGE_CACHE", "spent passkey challenges"),
)


def _per_process(alias: str) -> str:
    cls = backend_class(alias)
    name = cls.__name__ if cls is not None else "?"
    if cls is not None and issubclass(cls, import_string(DUMMY_BACKEND)):
        return f"{name}, which keeps nothing at all"
    return f"{name}: each process keeps its own copy"


@checks.register(checks.Tags.caches, checks.Tags.security, deploy=True)
def check_shared_caches(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W005: revocations, the throttles or one-use values on a per-process cache (an
    alias named so; ``AUTO`` only when it cannot use the database store)."""
    uses: dict[str, list[str]] = {}
    values = _store_settings()
    if values is None:
        return []
    revocation, throttle = (resolved_alias(value) for value in values)
    if apps.is_installed("appframework.auth"):
        if revocation is not None:
            uses.setdefault(revocation, []).append(
                "AUTH['REVOCATION_CACHE'] (ended sessions, revoked tokens)"
            )
        if throttle is not None:
            uses.setdefault(throttle, []).append("RATE_LIMIT['CACHE'] (the login throttle)")
    elif throttle is not None:
        uses.setdefault(throttle, []).append("RATE_LIMIT['CACHE'] (rate limits)")
    for app, section, key, what in _REPLAY_CACHES:
        if apps.is_installed(app):
            alias = resolved_alias(getattr(getattr(app_settings, section), key))
            if alias is not None:
                uses.setdefault(alias, []).append(f"{section}[{key!r}] ({what})")
    return [
        check_warning(
            "appframework.W005",
            f"Cache {alias!r}, used by APPFRAMEWORK {' and '.join(what)}, is "
            f"{_per_process(alias)}, so with several workers a logout, a revocation or a "
            "spent one-use value holds in one process only and every process counts "
            "login attempts separately.",
            "Leave these settings at AUTO (the default cache when it is shared, else the "
            f"suite's database store), point CACHES[{alias!r}] at a shared cache (Redis, "
            "Memcached), or name another alias in APPFRAMEWORK.",
        )
        for alias, what in uses.items()
        if is_process_local(alias)
    ]


_EVICTING_BACKENDS = ("memcached.",)


@checks.register(checks.Tags.caches, checks.Tags.security, deploy=True)
def check_revocation_cache(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W006: the record of ended sessions sits where it can be evicted."""
    values = _store_settings()
    if not apps.is_installed("appframework.auth") or values is None:
        return []
    revocation, throttle = (resolved_alias(value) for value in values)
    if revocation is None:
        return []  # the database store evicts nothing before it expires
    backend = cache_backend(revocation)
    reasons = []
    if revocation == throttle:
        reasons.append(
            "it is also the login throttle's cache, which writes a key per attempt: a "
            "flood of attempts can evict revocations"
        )
    if any(name in backend for name in _EVICTING_BACKENDS):
        reasons.append("Memcached evicts entries under memory pressure")
    if not reasons:
        return []
    return [
        check_warning(
            "appframework.W006",
            f"AUTH['REVOCATION_CACHE'] ({revocation!r}) may forget an ended session or a "
            f"revoked token — then a kept cookie or token works again: {'; '.join(reasons)}.",
            "Give REVOCATION_CACHE an alias of its own on a store that does not evict: "
            "the suite's database store (BACKEND "
            "'appframework.database_store.DatabaseStore'), or Redis with "
            "maxmemory-policy noeviction.",
        )
    ]
