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
# No CACHES: the suite's shared records (ended sessions, the login throttle, one-use
# sign-in values) are in its database store, shared by every process (docs/adopting.md
# step 8); check --deploy has nothing to say about them.
