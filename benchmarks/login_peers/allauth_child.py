"""The side of ``benchmarks/login_page.py --peer`` that serves django-allauth's own login
page, in a process of its own run by the peer's virtualenv (``setup_env.sh`` beside this
file): allauth and our code never share a process.

    .venvs/bench-login-peers/bin/python benchmarks/login_peers/allauth_child.py

answers the same lines on stdin as ``login_page_child.py``: ``<scenario> <n>`` prints the
mean CPU seconds per request of ``n`` requests; ``check`` prints the status of each
scenario. The project is the smallest one a site logging in by email with allauth (and
its MFA app) would have, made as like ours as its settings allow, so that what differs
is the two login pages: in-memory SQLite, Redis as the cache (allauth's rate limits then
cost what ours cost on Redis), PBKDF2 at 1,000 iterations, no email verification.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent
ITERATIONS = 1000
REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379"
REDIS_DB = 13  # flushed at start; login_page_child.py has 12
PATH = "/accounts/login/"
URLCONF = "allauth_bench_urls"
#: Never tripped, yet still consumed on every POST as allauth does. allauth keeps the
#: timestamps of a window's hits in one cache entry: a one-second window keeps that list
#: about as short as a real visitor's, where a minute of a benchmark's thousands of
#: requests from one address would grow it far beyond anything a real site sees.
HIGH = 10**9
RATE_LIMITS = {
    "login": f"{HIGH}/1s/ip",
    "login_failed": f"{HIGH}/1s/ip,{HIGH}/1s/key",
}


def configure() -> None:
    sys.path.insert(0, str(BENCHMARKS))  # wsgi_driver
    import django
    from django.conf import settings
    from django.urls import include, path

    settings.configure(
        DEBUG=False,
        SECRET_KEY="benchmark-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        USE_TZ=True,
        ALLOWED_HOSTS=["testserver"],
        ROOT_URLCONF=URLCONF,
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "django.contrib.messages",
            "django.contrib.staticfiles",
            "allauth",
            "allauth.account",
            "allauth.mfa",
        ],
        # Django's default stack (ours has its counterparts: security headers, the
        # common middleware) plus allauth's, as allauth's install guide has it.
        MIDDLEWARE=[
            "django.middleware.security.SecurityMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.contrib.messages.middleware.MessageMiddleware",
            "allauth.account.middleware.AccountMiddleware",
        ],
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                    ]
                },
            }
        ],
        AUTHENTICATION_BACKENDS=[
            "django.contrib.auth.backends.ModelBackend",
            "allauth.account.auth_backends.AuthenticationBackend",
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": f"{REDIS.rstrip('/')}/{REDIS_DB}",
            }
        },
        STATIC_URL="static/",
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
        ACCOUNT_LOGIN_METHODS={"email"},
        ACCOUNT_SIGNUP_FIELDS=["email*", "password1*", "password2*"],
        ACCOUNT_EMAIL_VERIFICATION="none",
        ACCOUNT_RATE_LIMITS=RATE_LIMITS,
    )
    django.setup()
    # allauth's URLs read its settings: the URLconf is made once Django is set up (it is
    # imported at the first request).
    urls = types.ModuleType(URLCONF)
    urls.urlpatterns = [path("accounts/", include("allauth.urls"))]  # type: ignore[attr-defined]
    sys.modules[URLCONF] = urls
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    PBKDF2PasswordHasher.iterations = ITERATIONS


def main() -> int:
    configure()
    from allauth.account.models import EmailAddress
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from login_page_child import EMAIL, PASSWORD, requests, serve

    cache.clear()
    call_command("migrate", verbosity=0, interactive=False)
    user = get_user_model()._default_manager.create_user("bench", EMAIL, PASSWORD)
    EmailAddress.objects.create(user=user, email=EMAIL, verified=True, primary=True)
    handler = get_wsgi_application()
    scenarios = requests(
        handler,
        path=PATH,
        login_field="login",
        csrf_cookie="csrftoken",
        HTTP_REFERER=f"http://testserver{PATH}",
    )
    serve(handler, scenarios)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
