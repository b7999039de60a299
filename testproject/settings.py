"""Demo project settings; also the base of the test settings (tests/settings.py).

SQLite, locmem cache and eager Celery by default; ``DATABASE_URL=postgres://...``
selects PostgreSQL. Environment variables from SPEC (APP_SECRET_KEY, SESSION_*, CSRF_*,
API_TOKEN_EXPIRES_IN, SECURITY_HEADERS_*) are applied last by appframework's helper.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent

DEBUG = os.environ.get("DEBUG", "1") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]

if "APP_SECRET_KEY" not in os.environ:
    # Demo only: a fixed key so `./scripts/demo` works with no setup. Real deployments
    # set APP_SECRET_KEY (system check appframework.E001 refuses to start without one).
    SECRET_KEY = "demo-only-insecure-key-do-not-deploy-0123456789abcdef"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "appframework.auth",
    "appframework.authorization",
    "appframework_graphql",
    "testproject.blog",
]

MIDDLEWARE = [
    "appframework.security.SecurityHeadersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "appframework.security.CsrfMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "appframework.middleware.ErrorMiddleware",
]

ROOT_URLCONF = "testproject.urls"
WSGI_APPLICATION = "testproject.wsgi.application"
ASGI_APPLICATION = "testproject.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]


def database_from_url(url: str) -> dict[str, object]:
    """``postgres://user:pass@host:port/name`` → a DATABASES entry."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        raise ValueError(
            f"DATABASE_URL scheme {parts.scheme!r} is not supported (use postgres://)."
        )
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or "postgres"),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
        "CONN_MAX_AGE": 0,
    }


if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": database_from_url(os.environ["DATABASE_URL"])}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR.parent / "db.sqlite3")),
        }
    }

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "blog.User"
AUTHENTICATION_BACKENDS = [
    "appframework.auth.AuthManager",
    "appframework.authorization.GateBackend",
]
LOGIN_URL = "/login"

# Celery: eager by default (the embedded "inline queue"); a broker URL switches it off.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "memory://")
CELERY_TASK_ALWAYS_EAGER = "CELERY_BROKER_URL" not in os.environ

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True

APPFRAMEWORK: dict[str, dict[str, object]] = {
    "GRAPHQL": {"SCHEMA": "testproject.blog.schema.schema"},
}

from appframework.env import apply_environment  # noqa: E402

apply_environment(globals())
