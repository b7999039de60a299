"""An existing project -- ``django-admin startproject`` plus ``class User(AbstractUser)``,
the admin, ``django.contrib.auth.urls`` and a few pages of its own -- that adopted the
suite exactly as docs/adopting.md says. Lines marked ``# adopting`` are the diff.

Run by tests/adoption/test_adoption.py in a subprocess (never by the main test run).
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

# The project's own line stays: apply_environment() never overrides a setting already in
# the module, so APP_SECRET_KEY is ignored while this line is here.
SECRET_KEY = "django-insecure-adoption-test-key-not-for-production-0123456789"
DEBUG = True
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]

INSTALLED_APPS = [
    "appframework.admin.AdminConfig",  # adopting: in place of "django.contrib.admin"
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "appframework.auth",  # adopting: after Django's apps ...
    "appframework.authorization",  # adopting: ... and before the project's
    "tests.adoption.project.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "appframework.security.SecurityHeadersMiddleware",  # adopting
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "appframework.security.CsrfMiddleware",  # adopting: in place of CsrfViewMiddleware
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "appframework.middleware.ErrorMiddleware",  # adopting: in place of XFrameOptions...
]
SILENCED_SYSTEM_CHECKS = ["security.W002"]  # adopting
AUTHENTICATION_BACKENDS = [  # adopting
    "appframework.auth.AuthManager",
    "appframework.authorization.GateBackend",
    # Kept, after the suite's: the sessions signed in before adopting name it. It is
    # never asked about a password (the suite's answer is final).
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "tests.adoption.project.urls"

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
            ],
        },
    },
]

if os.environ.get("DATABASE_URL"):
    from testproject.settings import database_from_url

    DATABASES = {"default": database_from_url(os.environ["DATABASE_URL"])}
    # Its own test database: the main run's PostgreSQL stage uses test_<NAME> meanwhile.
    DATABASES["default"]["TEST"] = {"NAME": f"test_adoption_{os.getpid()}"}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            # The test run uses an in-memory database; test_existing_data.py a file its
            # "before" project filled.
            "NAME": os.environ.get("ADOPTION_SQLITE_PATH") or BASE_DIR / "db.sqlite3",
        }
    }

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"  # django.contrib.auth.urls' page, as before adopting
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

from appframework.env import apply_environment  # noqa: E402  adopting: last

apply_environment(globals())
