"""Demo project settings; also the base of the test settings (tests/settings.py).

SQLite, locmem cache and eager Celery by default; ``DATABASE_URL=postgres://...``
selects PostgreSQL, ``REDIS_CACHE_URL=redis://host:port`` puts every shared store (the
caches) on Redis and ``CELERY_BROKER_URL`` selects a real broker (``scripts/cluster``
sets all three).
appframework's environment variables (APP_SECRET_KEY, SESSION_*, CSRF_*,
API_TOKEN_EXPIRES_IN, SECURITY_HEADERS_*; docs/settings.md) are applied last by
``apply_environment``.

Safe by default: DEBUG is off unless ``DEBUG=1`` (``scripts/demo`` sets it), and no
secret key is committed: without ``APP_SECRET_KEY`` a random key is kept in the ignored
file ``.demo-secret-key`` next to ``manage.py``. ``manage.py check --deploy`` refuses that
key (blog.E002), as it refuses the demo user (blog.E001) and the public mailbox (blog.E003).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.management.utils import get_random_secret_key

BASE_DIR = Path(__file__).resolve().parent

DEBUG = os.environ.get("DEBUG", "0") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]


def load_or_create_secret_key(path: Path) -> str:
    """The key stored in ``path``; on first use a new random one, written with mode 0600.

    Never fails: when the file cannot be read or written (a read-only checkout, a CI
    sandbox) the key is random for this process only, so sessions simply do not survive
    a restart. Creation is atomic (a private temporary file hard-linked into place), so
    runserver's two processes, started together, end up with the same key.
    """
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        key = ""
    except (OSError, UnicodeDecodeError):
        return get_random_secret_key()
    if key:
        return key
    key = get_random_secret_key()
    try:
        # mkstemp creates the file with mode 0600 (owner only).
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".demo-secret-key.")
    except OSError:
        return key
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key + "\n")
        try:
            # link() refuses to replace an existing file: the first process to get here
            # wins and every other one uses its key.
            os.link(tmp, path)
        except FileExistsError:
            existing = path.read_text(encoding="ascii").strip()
            if existing:
                return existing
            os.replace(tmp, path)  # an empty file left by hand: fill it
        except OSError:
            # No hard links on this filesystem: a plain rename (last writer wins).
            os.replace(tmp, path)
        return key
    except (OSError, UnicodeDecodeError):
        return key
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # gone already after a rename; a linked copy stays at `path`


# Recorded so that the deploy check blog.E002 can refuse this key in production.
DEMO_SECRET_KEY_FILE = BASE_DIR.parent / ".demo-secret-key"

if "APP_SECRET_KEY" not in os.environ:
    # Local use only. Real deployments set APP_SECRET_KEY (appframework.E001 refuses to
    # start without a key; `check --deploy` refuses this file's key, blog.E002).
    SECRET_KEY = load_or_create_secret_key(DEMO_SECRET_KEY_FILE)

INSTALLED_APPS = [
    # Django's admin with the suite's password + TOTP sign-in (docs/accounts.md).
    "appframework.admin.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "appframework.auth",
    "appframework.authorization",
    "appframework.oauth",
    "appframework.saml",
    # Passkeys: a second factor beside TOTP and passwordless sign-in (docs/passkeys.md).
    "appframework.passkeys",
    "appframework_tenancy",
    "appframework_webhooks",
    "appframework_graphql",
    # Django REST framework and django-ninja with the suite's classes (docs/drf.md,
    # docs/ninja.md): the demo's /api/drf/posts/ and /api/ninja/.
    "rest_framework",
    "ninja",
    "testproject.blog",
]

MIDDLEWARE = [
    # Django's stays: SSL redirect, HSTS, COOP (its SECURE_* settings).
    "django.middleware.security.SecurityMiddleware",
    # Inside Django's, so its headers (SECURITY_HEADERS_*) are the ones sent; before
    # CommonMiddleware, so it also answers an API client refused before any URL matched
    # (a bad Host) in the problem format under DEBUG.
    "appframework.security.SecurityHeadersMiddleware",
    # Django's SessionMiddleware, plus app sessions (X-Session-Token) for the JSON API.
    "appframework.headless.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "appframework.security.CsrfMiddleware",
    # The visitor's language (the selector in the demo's header): the account pages and
    # mails come in English, German, French and Spanish.
    "django.middleware.locale.LocaleMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: the resolver reads the signed-in user's memberships.
    "appframework_tenancy.middleware.TenantMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "appframework.middleware.ErrorMiddleware",
]
# SecurityHeadersMiddleware sends X-Frame-Options (SECURITY_HEADERS_FRAME_OPTIONS, DENY by
# default, @xframe_options_exempt honoured): Django's clickjacking middleware would only
# repeat it, and its absence is what security.W002 reports.
SILENCED_SYSTEM_CHECKS = ["security.W002"]

ROOT_URLCONF = "testproject.urls"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer first: DRF takes the first class's WWW-Authenticate for its 401s.
        "appframework.contrib.drf.BearerTokenAuthentication",
        "appframework.contrib.drf.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["appframework.contrib.drf.GatePermission"],
    # DRF's defaults, the JSON parser bounded on nesting (400 json_too_deep).
    "DEFAULT_PARSER_CLASSES": [
        "appframework.contrib.drf.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "appframework.contrib.drf.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    "DEFAULT_THROTTLE_RATES": {"demo-posts": "600/minute"},
}
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

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Ended sessions and revoked tokens on an alias of their own, so that the login
    # throttle's counters can never push them out (production: Redis with
    # noeviction, or Django's database cache).
    "revocations": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "revocations",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
}
if os.environ.get("REDIS_CACHE_URL"):
    # Several processes (scripts/cluster, docs/deploy.md): every shared store on Redis,
    # with short socket timeouts so that a Redis away is a quick 503, not a hung worker.
    _REDIS = os.environ["REDIS_CACHE_URL"].rstrip("/")
    _REDIS_OPTIONS = {"socket_connect_timeout": 1, "socket_timeout": 1}
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"{_REDIS}/1",
            "OPTIONS": _REDIS_OPTIONS,
        },
        "revocations": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"{_REDIS}/2",
            "OPTIONS": _REDIS_OPTIONS,
        },
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

AUTH_USER_MODEL = "blog.User"
AUTHENTICATION_BACKENDS = [
    "appframework.auth.AuthManager",
    "appframework.authorization.GateBackend",
]
LOGIN_URL = "appframework:login"
# Where single sign-on lands without a `next`.
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"  # the tour; unset, the suite's logout goes to LOGIN_URL

# Celery: eager by default (the embedded "inline queue"); a broker URL switches it off.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "memory://")
CELERY_TASK_ALWAYS_EAGER = "CELERY_BROKER_URL" not in os.environ
# A broker that stops answering is an error after 5 s, not a hang (docs/webhooks.md).
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
    "socket_timeout": 5,
    "socket_connect_timeout": 5,
}

# The secret of the demo's user.registered endpoint, shared with its own receiver.
DEMO_WEBHOOK_SECRET = os.environ.get("DEMO_WEBHOOK_SECRET", "demo-webhook-secret")
# Where seed_demo points that endpoint: this server (scripts/demo sets it from its address).
DEMO_BASE_URL = os.environ.get("DEMO_BASE_URL", "http://127.0.0.1:8000")

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français"), ("es", "Español")]
# Times on the demo's pages (the delivery log) are UTC, labelled as such.
TIME_ZONE = "UTC"

# The demo's outbox: account mails are files, shown on /mailbox (a real site sends them
# through SMTP). Tests run Django's in-memory backend instead.
EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_FILE_PATH = os.environ.get("DEMO_MAILBOX", str(BASE_DIR.parent / ".demo-mail"))
# /mailbox shows every reset link and sign-in code to whoever asks: on only while DEBUG
# is (scripts/demo), or with DEMO_MAILBOX_PAGE=1 (scripts/cluster); check --deploy refuses
# it (blog.E003).
DEMO_MAILBOX_PAGE = os.environ.get("DEMO_MAILBOX_PAGE", "1" if DEBUG else "0") == "1"
DEFAULT_FROM_EMAIL = "appframework demo <demo@example.com>"

APPFRAMEWORK: dict[str, dict[str, object]] = {
    "AUTH": {
        "REVOCATION_CACHE": "revocations",
        # A sign-up signs in once its address is confirmed (the link waits on /mailbox);
        # an address that has an account gets the same answer, so the form tells nobody.
        "EMAIL_VERIFICATION": "mandatory",
        "LOGIN_BY_CODE": True,
        # Mail the owner when a factor, the password or the address changes.
        "SECURITY_NOTIFICATIONS": True,
        # The demo's example app receives its single sign-on code here (docs/headless.md).
        "APP_REDIRECT_URIS": ["appframework-demo://signed-in"],
        # Signing out of the browser also ends the API tokens that session issued
        # (/account/token issues them with request=): the safe choice for tokens a
        # person makes by hand in a page, docs/tokens.md.
        "REVOKE_TOKENS_ON_LOGOUT": True,
        # The IdP's form POST to the SAML ACS carries no CSRF token; the signed response
        # and its request id guard it instead.
        "CSRF_EXEMPT": "appframework.saml.is_saml_acs_request",
    },
    # Single sign-on sends users with TOTP on to the library's code form (at /login/mfa).
    "MFA": {
        "CHALLENGE_URL": "appframework:mfa-challenge",
        "ISSUER": "appframework demo",
        # "Trust this browser for 30 days" on the code form.
        "TRUST_BROWSER": True,
    },
    # RP_ID unset: passkeys are bound to the host the demo is opened on (localhost; an
    # IP address such as 127.0.0.1 cannot hold passkeys). A deployment sets RP_ID.
    "PASSKEYS": {"RP_NAME": "appframework demo"},
    # Providers from environment variables (testproject/blog/sso.py), built on first use.
    "OAUTH": {"PROVIDERS": "testproject.blog.sso.oauth_providers"},
    "SAML": {"PROVIDERS": "testproject.blog.sso.saml_providers"},
    "TENANCY": {
        "RESOLVER": "testproject.blog.tenancy.resolve_tenant",
        # What the resolver reads: the session, a token, and the X-Tenant header.
        "VARY": ["Cookie", "Authorization", "X-Tenant"],
        # On PostgreSQL every query carries the tenant for blog_post's row-level-security
        # policy (migration blog 0007): raw SQL is held to the tenant too.
        "ROW_LEVEL_SECURITY": ["default"] if os.environ.get("DATABASE_URL") else [],
    },
    # The demo delivers to its own receiver on 127.0.0.1; a deployment keeps loopback
    # blocked (the default) and lists only trusted internal networks here.
    # Its tenants' endpoints too: the tour points a customer's endpoint at that receiver.
    "WEBHOOKS": {
        "ALLOWED_NETWORKS": ["127.0.0.0/8", "::1/128"],
        "ALLOWED_NETWORKS_FOR_TENANTS": True,
    },
    "GRAPHQL": {
        "SCHEMA": "testproject.blog.schema.schema",
        # The recommended production breadth limits (docs/graphql.md): a document of
        # hundreds of aliases is refused before it runs a single query.
        "MAX_ALIASES": 30,
        "MAX_ROOT_FIELDS": 15,
        "MAX_FIELDS": 500,
    },
}

if os.environ.get("GRAPHIQL_ASSETS_DIR"):
    # GraphiQL from a local copy of its files (offline, or a strict CSP): docs/graphql.md.
    from appframework_graphql.graphiql import assets_from_directory

    APPFRAMEWORK["GRAPHQL"]["GRAPHIQL_ASSETS"] = assets_from_directory(
        os.environ["GRAPHIQL_ASSETS_DIR"]
    )

if os.environ.get("CELERY_VISIBILITY_TIMEOUT"):
    # How long a job taken by a worker that died stays invisible before Redis hands it
    # to another (docs/webhooks.md): short in the cluster's fault tests, with a backoff
    # cap well below half of it (appframework_webhooks.W001).
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        visibility_timeout=int(os.environ["CELERY_VISIBILITY_TIMEOUT"]),
        unacked_restore_interval=1,
        # The restore lock of a worker killed mid-scan expires in seconds, not the
        # default 5 minutes (docs/caveats.md).
        unacked_mutex_expire=5,
    )
    APPFRAMEWORK["WEBHOOKS"]["BACKOFF_CAP"] = float(os.environ.get("WEBHOOKS_BACKOFF_CAP", 600))

if os.environ.get("CLIENT_IP_HEADER"):
    # Behind a load balancer (scripts/cluster): the client's address is the last one it
    # appended to this header, not the balancer's own (the throttles count per client).
    APPFRAMEWORK["RATE_LIMIT"] = {"CLIENT_IP_HEADER": os.environ["CLIENT_IP_HEADER"]}

if os.environ.get("DEMO_REAUTHENTICATION_TIMEOUT"):
    # The browser test of "Confirm it's you" (tests/e2e): a proof that goes stale in
    # seconds rather than five minutes.
    APPFRAMEWORK["AUTH"]["REAUTHENTICATION_TIMEOUT"] = int(
        os.environ["DEMO_REAUTHENTICATION_TIMEOUT"]
    )

from appframework.env import apply_environment  # noqa: E402

apply_environment(globals())
