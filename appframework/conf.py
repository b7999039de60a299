"""The one settings object of the suite, over ``settings.APPFRAMEWORK``.

Modelled on DRF's ``api_settings``: defaults per section, dotted-path strings resolved
lazily (with an error naming the key), unknown keys rejected, reloaded when
``setting_changed`` names ``APPFRAMEWORK`` so ``override_settings`` works in tests.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

__all__ = [
    "AUTO",
    "DEFAULTS",
    "IMPORT_STRINGS",
    "app_settings",
    "derived_setting",
    "import_from_setting",
]


class _Auto:
    """Sentinel: "let the suite decide from the rest of the configuration"."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()

DEFAULTS: dict[str, dict[str, Any]] = {
    "AUTH": {
        # AUTO: the user model's own USERNAME_FIELD.
        "USERNAME_FIELD": AUTO,
        # AUTO: "password_hash" when the user model has that column (the suite's
        # convention), else Django's "password".
        "PASSWORD_FIELD": AUTO,
        # Optional integer column; when the user model has it, bumping it logs the user
        # out everywhere (sessions and API tokens).
        "SESSION_VERSION_FIELD": "session_version",
        # Import string of ``predicate(request) -> bool``; true means "skip CSRF".
        "CSRF_EXEMPT": None,
        "API_TOKEN_EXPIRES_IN": 30 * 24 * 3600,
        # The scopes a personal access token may be limited to (docs/tokens.md); a token
        # made with none may do what a signed token of its user may.
        "ACCESS_TOKEN_SCOPES": ["read", "write", "webhooks"],
        # 0 = the running Django's PBKDF2 default; a larger number raises it.
        "PASSWORD_ITERATIONS": 0,
        # Import string of the class bound as the token manager (subclass TokenManager).
        "TOKEN_MANAGER": "appframework.auth.tokens.TokenManager",
        # Cache alias holding ended sessions and revoked tokens until they expire. AUTO
        # (here and for the four other records): Django's "default" cache when every
        # process shares it, else the suite's database store (appframework.stores).
        "REVOCATION_CACHE": AUTO,
        # Plain logout() also revokes the API tokens issued from that session.
        "REVOKE_TOKENS_ON_LOGOUT": False,
        # Import string of the account adapter: what a project overrides of the account
        # pages and flows (redirects, sign-up, mail, messages; docs/accounts.md).
        "ADAPTER": "appframework.auth.adapter.AccountAdapter",
        # Form classes of the account pages by name ("login", "signup", ...): import
        # strings replacing the suite's (docs/accounts.md lists the names).
        "FORMS": {},
        # Seconds a proven factor (password, code, passkey) counts as recent: adding or
        # removing a factor, tokens, the email or the password need one this fresh.
        "REAUTHENTICATION_TIMEOUT": 300,
        # A session's "last seen" is written at most once per this many seconds (the
        # time of the last write rides in the session, so requests between cost nothing).
        "SESSION_SEEN_INTERVAL": 300,
        # Mail the user when a factor, the password or the email changes (the signals
        # are sent either way).
        "SECURITY_NOTIFICATIONS": False,
        # Sign-up through the suite's page and API (the adapter may close it per request).
        "SIGNUP": True,
        # "mandatory" (no sign-in before the address is confirmed, no answer that tells
        # a taken address from a new one), "optional" or "none".
        "EMAIL_VERIFICATION": "optional",
        # Confirm an address with a 6-character code typed in the same browser, instead
        # of a link.
        "EMAIL_VERIFICATION_BY_CODE": False,
        # Seconds a confirmation link, or a code, stays good.
        "EMAIL_VERIFICATION_LINK_TTL": 3 * 24 * 3600,
        "EMAIL_CODE_TTL": 15 * 60,
        # Sign in with a code mailed to the account's address (then the second factor).
        "LOGIN_BY_CODE": False,
        # Account mails (confirmation, sign-in code, password reset) per email address,
        # and those plus sign-ups per client address, within MAIL_WINDOW seconds.
        # Where an app's single sign-on may hand its one-use code (the app's own URI,
        # e.g. "com.example.app:/signed-in"; docs/headless.md).
        "APP_REDIRECT_URIS": [],
        "MAIL_PER_ADDRESS": 3,
        "MAIL_PER_CLIENT": 20,
        "MAIL_WINDOW": 3600,
    },
    "MFA": {
        # The issuer authenticator apps show next to the account (provisioning URI).
        "ISSUER": "appframework",
        # Seconds a password-verified sign-in may wait for its two-factor code.
        "CHALLENGE_TTL": 300,
        # Where single sign-on (OAuth, SAML) sends a user whose TOTP code is awaited: a
        # URL or URL name of the project's code form. None: settings.LOGIN_URL.
        "CHALLENGE_URL": None,
        # Guessing bound per user on every second-factor try (docs/mfa.md): FREE_TRIES
        # wrong answers at once, then waits of FIRST_WAIT seconds, doubling, at most
        # MAX_WAIT, until one succeeds.
        "FREE_TRIES": 5,
        "FIRST_WAIT": 60.0,
        "MAX_WAIT": 4 * 3600.0,
        # Offer "trust this browser" after the second factor: the next sign-ins from it
        # skip the second step for TRUST_DAYS days (a signed cookie, listed and
        # revocable with the sessions).
        "TRUST_BROWSER": False,
        "TRUST_DAYS": 30,
    },
    "PASSKEYS": {
        # The relying-party id: the domain passkeys are bound to (the host or a parent
        # of it: "example.com" serves www.example.com too). None: the request's host,
        # so each host a site answers on has passkeys of its own.
        "RP_ID": None,
        # The name authenticators show next to the account; None: the RP id.
        "RP_NAME": None,
        # Origins ("https://example.com") a ceremony may come from; empty: the
        # request's own origin.
        "ORIGINS": [],
        # Seconds a ceremony (options, then the authenticator's answer) may take.
        "CHALLENGE_TIMEOUT": 300,
        # Cache alias remembering spent challenges; AUTO as for AUTH.REVOCATION_CACHE.
        "CHALLENGE_CACHE": AUTO,
        # User verification (PIN, biometrics) asked when registering and as a second
        # factor: "required", "preferred" or "discouraged". Passwordless sign-in always
        # requires it.
        "USER_VERIFICATION": "preferred",
        # Passwordless sign-ins per client address within LOGIN_WINDOW seconds.
        "LOGIN_ATTEMPTS": 10,
        "LOGIN_WINDOW": 60,
    },
    "OAUTH": {
        # OAuthProvider objects (appframework.oauth builders), or the import string of a
        # function returning them, called once on first use (discovery happens then).
        "PROVIDERS": [],
        # Seconds for each call to a provider (discovery, token exchange, userinfo).
        "TIMEOUT": 10.0,
        # Cache alias remembering spent states (AUTO as for AUTH.REVOCATION_CACHE), and
        # how long a started sign-in may take.
        "STATE_CACHE": AUTO,
        "STATE_TTL": 600,
        # Users with TOTP on answer the code challenge before the session is theirs.
        "MFA": True,
        # Import string of handler(request, oauth_user) -> local user (find or create).
        "USER_HANDLER": "appframework.oauth.users.find_or_create_user",
        # Create a new account when the provider did not verify its email address. Off:
        # such an account would squat the address before its owner signs up.
        "ALLOW_UNVERIFIED_EMAIL": False,
        # Where a signed-in user lands without a safe ``next``; None: LOGIN_REDIRECT_URL.
        "LOGIN_REDIRECT_URL": None,
    },
    "SAML": {
        # SamlProvider objects (appframework.saml.saml_provider), or the import string of
        # a function returning them, called once on first use.
        "PROVIDERS": [],
        # Cache alias holding outstanding AuthnRequest ids and accepted assertion ids;
        # AUTO as for AUTH.REVOCATION_CACHE (shared by every process serving the ACS).
        "REPLAY_CACHE": AUTO,
        # Seconds an accepted assertion id is remembered (at least until it expires).
        "REPLAY_WINDOW": 3600,
        # Seconds the IdP may take to answer an AuthnRequest.
        "REQUEST_TTL": 600,
        # Seconds of clock difference tolerated on the assertion's time window.
        "CLOCK_SKEW": 60,
        # Users with TOTP on answer the code challenge before the session is theirs.
        "MFA": True,
        # Import string of handler(request, saml_user, provider) -> local user.
        "USER_HANDLER": "appframework.saml.users.find_or_create_user",
        # Where a signed-in user lands without a safe next/RelayState; None: LOGIN_REDIRECT_URL.
        "LOGIN_REDIRECT_URL": None,
        # Days before a configured certificate's expiry that appframework_saml.W001 warns.
        "CERT_EXPIRY_WARNING_DAYS": 30,
    },
    "RATE_LIMIT": {
        # Cache alias of the RateLimiter (atomic add and incr); AUTO as for
        # AUTH.REVOCATION_CACHE.
        "CACHE": AUTO,
        # Login throttle: failed attempts per (account, client address) and per client
        # address within LOGIN_WINDOW seconds; None switches that count off.
        "LOGIN_ATTEMPTS": 5,
        "LOGIN_ADDRESS_ATTEMPTS": 50,
        "LOGIN_WINDOW": 300,
        # Client address: REMOTE_ADDR, unless this names a header set by proxies you
        # trust (e.g. "X-Forwarded-For"); TRUSTED_PROXY_COUNT proxies append to it.
        "CLIENT_IP_HEADER": None,
        "TRUSTED_PROXY_COUNT": 1,
    },
    "CSRF": {
        "ENABLED": True,
        # AUTO: Django's CSRF_COOKIE_NAME, so the suite's cookie is the one Django's own
        # checks (@csrf_protect, DRF, ninja) read; apply_environment makes it csrf_token.
        "COOKIE_NAME": AUTO,
        "HEADER_NAME": "X-CSRF-Token",
        "FORM_FIELD": "_token",
        # AUTO: the session cookie name when the AuthServiceProvider is installed.
        "PROTECT_IF_COOKIE_PRESENT": AUTO,
        # Unsafe requests the CSRF check covers must come from this site's origin or one
        # of Django's CSRF_TRUSTED_ORIGINS (Origin header, or Referer on HTTPS).
        "CHECK_ORIGIN": True,
    },
    "SECURITY_HEADERS": {
        "CSP": None,
        # The suite's own pages (account pages, the app hand-off page): no inline script
        # or style. None turns it off; a CSP of the project's own (CSP, SECURE_CSP) wins.
        "PAGE_CSP": (
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
        ),
        "FRAME_OPTIONS": "DENY",
        "CONTENT_TYPE_OPTIONS": True,
        "REFERRER_POLICY": "strict-origin-when-cross-origin",
        "HSTS": False,
        "HSTS_MAX_AGE": 31536000,
    },
    "AUTHORIZATION": {
        # Import every installed app's ``policies`` module at start-up (as the admin does
        # with ``admin`` modules): what AutodiscoverAuthorizationServiceProvider does.
        "AUTODISCOVER_POLICIES": False,
    },
    "TENANCY": {
        # Import string of resolver(request) -> tenant id or None. Required: there is no
        # default way to know a request's tenant (appframework_tenancy.E001).
        "RESOLVER": None,
        # True: a tenant-scoped query with no tenant selected raises TenantRequired
        # instead of running unfiltered; all_tenants() still reads every tenant.
        "STRICT": False,
        # Carry the tenant from the publisher to the Celery worker (when Celery is installed).
        "CELERY": True,
        # Add the Gate hook denying any ability on another tenant's object.
        "GATE_GUARD": True,
        # Request headers the resolver reads: sent in Vary, so no shared cache serves one
        # tenant's page to another (responses also get Cache-Control: private).
        "VARY": ["Cookie", "Authorization"],
        # Database aliases (PostgreSQL) on which every query carries the current tenant in
        # the session setting app.tenant_id, for row-level-security policies to compare.
        "ROW_LEVEL_SECURITY": [],
    },
    "WEBHOOKS": {
        # Attempts in total per delivery (first try + retries).
        "MAX_ATTEMPTS": 5,
        # Refuse receivers whose address is not public (SSRF guard); ALLOWED_NETWORKS
        # lists CIDRs let through anyway (an intranet, a test listener), never link-local.
        "BLOCK_PRIVATE_NETWORK_TARGETS": True,
        "ALLOWED_NETWORKS": [],
        # True: ALLOWED_NETWORKS also lets tenants' endpoints through; by default they
        # open the operator's (no tenant) only, never a customer's URL into your network.
        "ALLOWED_NETWORKS_FOR_TENANTS": False,
        # Seconds: connecting, waiting between bytes of the answer, and the whole attempt.
        "CONNECT_TIMEOUT": 3.0,
        "READ_TIMEOUT": 10.0,
        "DEADLINE": 30.0,
        # Bytes of the receiver's answer read and kept in the delivery log.
        "RESPONSE_BODY_LIMIT": 2000,
        # Write one WebhookDelivery row per attempt.
        "DELIVERY_LOG": True,
        # Retry backoff: BASE * 2**retry seconds, capped, with +-20% jitter.
        "BACKOFF_BASE": 10.0,
        "BACKOFF_CAP": 600.0,
        # Celery queue of DeliverWebhookJob (None: the default queue).
        "QUEUE": None,
        # First attempts of an event to this many endpoints or more go in batches of
        # BATCH_SIZE (one job sends them all at once); BATCH_SIZE 1 turns batching off.
        "BATCH_MIN_ENDPOINTS": 10,
        "BATCH_SIZE": 100,
        # Sends of one batch in flight at once (threads per worker process).
        "BATCH_CONCURRENCY": 16,
        # Seconds a rotated-out secret keeps signing beside the new one (both signatures
        # in webhook-signature), unless the rotation names its own overlap.
        "SECRET_OVERLAP": 24 * 3600,
        # An endpoint is disabled once FAILURES deliveries in a row have failed for good,
        # the first of them at least SECONDS ago (both); None never disables one.
        "DISABLE_AFTER": {"FAILURES": 20, "SECONDS": 5 * 24 * 3600},
        # Firing an event name the catalogue does not have raises ValidationException.
        # AUTO: under DEBUG and in tests (Django's test environment); otherwise it is
        # logged and delivered.
        "STRICT_EVENTS": AUTO,
        # False: on PostgreSQL the jobs' own connections commit the delivery log with
        # synchronous_commit = off (the last rows can be lost if PostgreSQL crashes).
        "DELIVERY_LOG_SYNCHRONOUS_COMMIT": True,
    },
    "GRAPHQL": {
        "SCHEMA": None,
        "PATH": "/graphql",
        "GRAPHIQL": None,
        "MAX_DEPTH": 15,
        "MAX_TOKENS": 10000,
        "DOCUMENT_CACHE_SIZE": 256,
        # Dict overriding GraphiQL asset URLs (self-hosting): keys of
        # appframework_graphql.graphiql.CDN_ASSETS.
        "GRAPHIQL_ASSETS": None,
        # Serve the endpoint with the async view (async resolvers, ASGI deployments).
        "ASYNC": False,
        # Breadth limits checked before execution; None (the default) disables each.
        "MAX_ALIASES": None,
        "MAX_ROOT_FIELDS": None,
        "MAX_FIELDS": None,
        # False rejects __schema/__type and hides "Did you mean ...?" suggestions.
        "INTROSPECTION": True,
    },
}

# (section, key) pairs holding dotted paths, imported on first access.
IMPORT_STRINGS: frozenset[tuple[str, str]] = frozenset(
    {
        ("AUTH", "ADAPTER"),
        ("AUTH", "CSRF_EXEMPT"),
        ("AUTH", "TOKEN_MANAGER"),
        ("GRAPHQL", "SCHEMA"),
        ("OAUTH", "USER_HANDLER"),
        ("SAML", "USER_HANDLER"),
        ("TENANCY", "RESOLVER"),
    }
)


def import_from_setting(value: Any, section: str, key: str) -> Any:
    """Import ``value`` if it is a dotted path; the error names the setting."""
    if value is None or not isinstance(value, str):
        return value
    try:
        return import_string(value)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"Could not import {value!r} for APPFRAMEWORK[{section!r}][{key!r}]: "
            f"{exc.__class__.__name__}: {exc}"
        ) from exc


class _Section:
    """One section's values, attribute access, import strings resolved on first use."""

    def __init__(self, name: str, user: Mapping[str, Any]) -> None:
        self._name = name
        self._user = user

    def __getattr__(self, key: str) -> Any:
        defaults = DEFAULTS[self._name]
        if key not in defaults:
            raise AttributeError(f"Invalid appframework setting: {self._name}.{key}")
        value = self._user.get(key, defaults[key])
        if (self._name, key) in IMPORT_STRINGS:
            value = import_from_setting(value, self._name, key)
        # Cache on the instance: the next access skips __getattr__ entirely.
        setattr(self, key, value)
        return value


class AppSettings:
    """``app_settings.AUTH.USERNAME_FIELD`` and the like."""

    def __init__(self) -> None:
        self._sections: dict[str, _Section] = {}
        self._loaded = False

    def _load(self) -> None:
        user = getattr(django_settings, "APPFRAMEWORK", {}) or {}
        if not isinstance(user, Mapping):
            raise ImproperlyConfigured("settings.APPFRAMEWORK must be a dict.")
        for section, values in user.items():
            if section not in DEFAULTS:
                raise ImproperlyConfigured(
                    f"Unknown APPFRAMEWORK section {section!r}; "
                    f"known sections: {', '.join(sorted(DEFAULTS))}."
                )
            if not isinstance(values, Mapping):
                raise ImproperlyConfigured(f"APPFRAMEWORK[{section!r}] must be a dict.")
            unknown = set(values) - set(DEFAULTS[section])
            if unknown:
                raise ImproperlyConfigured(
                    f"Unknown key(s) in APPFRAMEWORK[{section!r}]: "
                    f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(DEFAULTS[section]))}."
                )
        self._sections = {name: _Section(name, user.get(name, {})) for name in DEFAULTS}
        self._loaded = True

    def __getattr__(self, name: str) -> _Section:
        if name.startswith("_"):
            raise AttributeError(name)
        if not self._loaded:
            self._load()
        try:
            section = self._sections[name]
        except KeyError:
            raise AttributeError(f"Invalid appframework settings section: {name}") from None
        setattr(self, name, section)
        return section

    def reload(self) -> None:
        for name in list(self.__dict__):
            if not name.startswith("_"):
                delattr(self, name)
        self._sections = {}
        self._loaded = False


app_settings = AppSettings()

_DERIVED_CACHES: list[Callable[..., Any]] = []

F = TypeVar("F", bound=Callable[..., Any])


def derived_setting(func: F) -> F:
    """Cache a value computed from settings until the next ``setting_changed``."""
    cached = functools.cache(func)
    _DERIVED_CACHES.append(cached)
    return cached  # type: ignore[return-value]


def _reload(*, setting: str, **kwargs: Any) -> None:
    # The settings object reads APPFRAMEWORK alone; derived values also read Django's
    # own settings (MIDDLEWARE, CACHES, SECRET_KEY ...), so they are recomputed on any
    # change (setting_changed only fires under override_settings: tests).
    if setting == "APPFRAMEWORK":
        app_settings.reload()
    for cache in _DERIVED_CACHES:
        cache.cache_clear()  # type: ignore[attr-defined]


setting_changed.connect(_reload, dispatch_uid="appframework.conf.reload")
