"""The same project as production runs it: what ``check --deploy`` is asked about."""

from .settings import *  # noqa: F403

SECRET_KEY = "k3Vq9-pX2m@Lr8#tZ6wY!cN4bH0sJ7dF1gA5eU*oI_yT9vR2nQ8"
DEBUG = False
ALLOWED_HOSTS = ["www.example.com"]
SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# Shared caches: the login throttle on one alias, ended sessions and revoked tokens on
# another that does not evict (appframework.W005, W006). Tables: `createcachetable`.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "cache"},
    "revocations": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "revocations",
    },
}
APPFRAMEWORK["AUTH"] = {**APPFRAMEWORK.get("AUTH", {}), "REVOCATION_CACHE": "revocations"}  # noqa: F405
