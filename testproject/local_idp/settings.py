"""Settings of the local OpenID Connect provider (``python -m testproject.local_idp``).

Everything it keeps lives in one data directory, named by the ``LOCAL_IDP_DATA_DIR``
environment variable: the SQLite database, the Django secret key and the RSA key that signs
ID tokens. ``__main__`` creates that directory's keys before Django starts; these settings
only read them.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.exceptions import ImproperlyConfigured

from testproject.local_idp import (
    DATA_DIR_ENV,
    DB_FILE,
    PKCE_OPTIONAL_ENV,
    RSA_KEY_FILE,
    SECRET_KEY_FILE,
)


def _data_dir() -> Path:
    value = os.environ.get(DATA_DIR_ENV, "")
    if not value:
        raise ImproperlyConfigured(
            f"{DATA_DIR_ENV} is not set: start the provider with "
            "`python -m testproject.local_idp --data-dir DIR ...`"
        )
    return Path(value).resolve()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise ImproperlyConfigured(
            f"{path} is missing: `python -m testproject.local_idp` creates it on start"
        ) from None


DATA_DIR = _data_dir()

SECRET_KEY = _read(DATA_DIR / SECRET_KEY_FILE).strip()
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "testproject.local_idp.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        # oauth2_provider renders its own error page (a bad redirect_uri, an unknown client).
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DATA_DIR / DB_FILE,
        # The server is threaded: a login and a token request may write at once, and
        # SQLite allows one writer. Waiting (and taking the write lock up front) beats
        # failing with "database is locked"; WAL lets reads go on meanwhile. No fsync:
        # the database holds only seeded demo data (re-created by any start), and syncing
        # made the first start's migrations a second slower.
        "OPTIONS": {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;",
        },
    }
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "static/"

# A browser keeps cookies per host, not per port: the demo on 127.0.0.1:8000 and this
# provider on 127.0.0.1:8001 share one cookie jar, so the names must not collide with the
# demo's (Django's defaults, or the suite's csrf_token).
SESSION_COOKIE_NAME = "local_idp_session"
CSRF_COOKIE_NAME = "local_idp_csrf"


class DemoCredentialHasher(PBKDF2PasswordHasher):
    """PBKDF2 with few iterations. Every password and the client secret here are
    published demo credentials, so a slow hash protects nothing, while Django's default
    (~0.3 s a hash) would be paid on every login and every token request of a test run."""

    iterations = 1000


PASSWORD_HASHERS = ["testproject.local_idp.settings.DemoCredentialHasher"]

LOGIN_URL = "/accounts/login/"
# Nothing to show after a login that was not part of an authorization request.
LOGIN_REDIRECT_URL = "/accounts/login/"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _read(DATA_DIR / RSA_KEY_FILE),
    # PKCE of every client, confidential ones too: the client secret proves who redeems
    # a code, not that the code belongs to the sign-in it is redeemed for (code
    # injection). `--pkce-optional` serves the tests that show what a client without
    # PKCE is exposed to.
    "PKCE_REQUIRED": os.environ.get(PKCE_OPTIONAL_ENV) != "1",
    # S256 only: "plain" sends the verifier itself through the browser. Discovery then
    # lists S256 alone.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "SCOPES": {
        "openid": "Sign you in (OpenID Connect)",
        "email": "Your email address and whether it is verified",
        "profile": "Your name, username and picture",
    },
    "DEFAULT_SCOPES": ["openid"],
    # The one client uses the authorization code flow; discovery should not advertise
    # the implicit and hybrid flows DOT lists by default.
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    # RFC 9207: the callback names the issuer (and discovery says so), which lets a
    # client with several providers detect a response from the wrong one (mix-up).
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "OAUTH2_VALIDATOR_CLASS": "testproject.local_idp.validators.LocalIdpValidator",
    # The relying parties under test run on plain http (127.0.0.1, testserver).
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # Errors (a 500's traceback) reach the process's output, which the test helper shows
    # when a flow fails; DEBUG is off, so nothing else would print them.
    "loggers": {
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "oauth2_provider": {"handlers": ["console"], "level": "WARNING", "propagate": False},
    },
}
