"""A minimal project served by ``gunicorn -w 2`` in tests/stores/test_two_workers.py:
Django's auth and contenttypes, the suite's auth and SAML apps, and no ``CACHES``
setting at all, so Django's ``default`` cache is its implicit per-process LocMemCache.
Nothing in ``APPFRAMEWORK`` names a cache either: whatever the records need across
processes comes from the suite's defaults.

Read from the environment (the test sets them): ``APP_SECRET_KEY`` (through
``apply_environment``, as a deployment does), ``TWO_WORKERS_BASE_URL`` (the server's
own ``http://127.0.0.1:<port>``, for the SAML provider's ACS), ``TWO_WORKERS_IDP_CERT``
(the test IdP's certificate file) and ``TWO_WORKERS_DATABASE`` (a SQLite file, or a
``postgres://`` URL).
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "appframework.auth",
    "appframework.saml",
    "tests.stores.two_workers",
]
AUTH_USER_MODEL = "two_workers.User"

MIDDLEWARE = [
    "tests.stores.two_workers.site.WorkerHeaderMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "appframework.security.CsrfMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "appframework.middleware.ErrorMiddleware",
]
AUTHENTICATION_BACKENDS = ["appframework.auth.AuthManager"]
ROOT_URLCONF = "tests.stores.two_workers.site"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
LOGIN_URL = "appframework:login"
LOGIN_REDIRECT_URL = "/whoami"

_DATABASE = os.environ["TWO_WORKERS_DATABASE"]
if _DATABASE.startswith("postgres://"):
    _url = urlsplit(_DATABASE)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(_url.path.lstrip("/")),
            "USER": unquote(_url.username or "postgres"),
            "PASSWORD": unquote(_url.password or ""),
            "HOST": _url.hostname or "127.0.0.1",
            "PORT": str(_url.port or 5432),
        }
    }
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": _DATABASE}}

USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "ERROR"}}

APPFRAMEWORK = {
    # The IdP's form POST to the ACS carries no CSRF token (docs/saml.md).
    "AUTH": {"CSRF_EXEMPT": "appframework.saml.is_saml_acs_request"},
    "SAML": {"PROVIDERS": "tests.stores.two_workers.site.saml_providers"},
}

from appframework.env import apply_environment  # noqa: E402

apply_environment(globals())
