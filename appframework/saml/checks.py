"""Checks ``appframework_saml.E001`` to ``E003``, ``W001`` to ``W005`` and ``I001`` (docs/checks.md)."""

from __future__ import annotations

import datetime
import functools
import subprocess
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig, apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from ..checks import DOCS_HINT, cache_backend, check_error, check_warning, resolved_alias
from ..conf import app_settings
from ..sso_config import sessions_ready, shared_setting_problems
from ..stores import is_process_local

Messages = list[checks.CheckMessage]


@functools.cache
def xmlsec_version() -> tuple[str, str] | None:
    """(path, version line) of the xmlsec1 binary pysaml2 will use, or None."""
    from saml2.sigver import get_xmlsec_binary

    try:
        path = get_xmlsec_binary()
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except Exception:
        return None
    lines = (out.stdout or out.stderr or "").strip().splitlines()
    return path, lines[0] if lines else "unknown version"


def check_xmlsec(*, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> Messages:
    """E001: no xmlsec1, so no signature can be checked."""
    if xmlsec_version() is not None:
        return []
    return [
        check_error(
            "appframework_saml.E001",
            "The xmlsec1 binary was not found: SAML signatures cannot be checked, so "
            "every response would be refused.",
            "Install it (Debian/Ubuntu: apt-get install xmlsec1; macOS: brew install libxmlsec1).",
        )
    ]


def report_xmlsec(*, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> Messages:
    """I001 (deploy): which xmlsec1 checks signatures, and its version."""
    found = xmlsec_version()
    if found is None:
        return []
    path, version = found
    return [
        checks.Info(
            f"SAML signatures are checked by {path} ({version}).",
            hint=DOCS_HINT.format(id="appframework_saml-I001"),
            id="appframework_saml.I001",
        )
    ]


def check_sessions(*, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> Messages:
    """E003: signing in needs the session machinery."""
    if sessions_ready():
        return []
    return [
        check_error(
            "appframework_saml.E003",
            "SAML login needs the session machinery: SessionMiddleware in MIDDLEWARE and "
            "'appframework.auth' in INSTALLED_APPS.",
            "Add both.",
        )
    ]


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def check_settings(*, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> Messages:
    """E002: a bad value in ``SAML``."""
    from .types import SamlProvider

    section = app_settings.SAML
    problems = shared_setting_problems("SAML", SamlProvider, "REPLAY_CACHE")
    for key in ("REPLAY_WINDOW", "REQUEST_TTL", "CERT_EXPIRY_WARNING_DAYS"):
        if not _positive_int(getattr(section, key)):
            problems.append(f"{key} must be a positive number")
    skew = section.CLOCK_SKEW
    if not isinstance(skew, int) or isinstance(skew, bool) or not 0 <= skew <= 600:
        problems.append("CLOCK_SKEW must be 0 to 600 seconds")
    return [
        check_error("appframework_saml.E002", f"APPFRAMEWORK['SAML']: {p}.", "Fix the value named.")
        for p in problems
    ]


def _static_providers() -> list[Any]:
    """The providers when they are listed in settings (a factory is not called here:
    checks must not reach the network)."""
    from .types import SamlProvider

    providers = app_settings.SAML.PROVIDERS
    if isinstance(providers, SamlProvider):
        return [providers]
    if not isinstance(providers, list | tuple):
        return []
    return [p for p in providers if isinstance(p, SamlProvider)]


def _expiry(certificate: str) -> datetime.datetime:
    import base64

    from cryptography import x509

    from .types import certificate_body

    cert = x509.load_der_x509_certificate(base64.b64decode(certificate_body(certificate)))
    return cert.not_valid_after_utc


def check_certificates(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """W001: a configured certificate has expired or expires within the warning days."""
    days = app_settings.SAML.CERT_EXPIRY_WARNING_DAYS
    if not _positive_int(days):
        return []
    now = datetime.datetime.now(datetime.UTC)
    messages: Messages = []
    for provider in _static_providers():
        for label, cert in (
            ("idp_x509_cert", provider.idp_x509_cert),
            ("sp_x509_cert", provider.sp_x509_cert),
        ):
            if cert is None:
                continue
            expires = _expiry(cert)
            if expires - now > datetime.timedelta(days=days):
                continue
            state = "expired" if expires <= now else "expires"
            messages.append(
                check_warning(
                    "appframework_saml.W001",
                    f"SAML provider {provider.name!r}: {label} {state} on "
                    f"{expires:%Y-%m-%d %H:%M} UTC.",
                    "Get the new certificate (the IdP's metadata) and configure it before "
                    "that date; an expired one makes every sign-in fail.",
                )
            )
    return messages


def check_csrf_exemption(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """W002: nothing exempts the ACS from CSRF, so IdP POSTs carrying a session cookie
    (a cookie with SameSite=None, or an IdP on the same site) are refused."""
    if not app_settings.CSRF.ENABLED or not apps.is_installed("appframework.auth"):
        return []
    try:
        predicate = app_settings.AUTH.CSRF_EXEMPT
    except ImproperlyConfigured:
        return []  # E002 of the core reports it
    if predicate is not None:
        return []
    return [
        check_warning(
            "appframework_saml.W002",
            "AUTH['CSRF_EXEMPT'] is not set: an IdP's POST to the ACS that carries a session "
            "cookie is refused by the CSRF check.",
            "Set AUTH['CSRF_EXEMPT'] = 'appframework.saml.is_saml_acs_request' (the ACS is "
            "guarded by the signed response and its request id instead).",
        )
    ]


def check_session_samesite(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """W003: a Strict session cookie never reaches the resume step. The IdP's POST and the
    redirect that follows it are a navigation started on the IdP's site, and a browser
    sends a Strict cookie on none of it, so every SP-initiated sign-in is refused as not
    started in this browser."""
    from django.conf import settings

    if str(getattr(settings, "SESSION_COOKIE_SAMESITE", "")).lower() != "strict":
        return []
    return [
        check_warning(
            "appframework_saml.W003",
            "SESSION_COOKIE_SAMESITE is 'Strict': the session cookie does not come back with "
            "the redirect after the IdP's POST, so every SP-initiated SAML sign-in is "
            "refused (saml_request_not_started_here).",
            "Use 'Lax' (Django's default), or 'None' with SESSION_COOKIE_SECURE.",
        )
    ]


def check_idp_initiated(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """W004: a provider listed in settings accepts IdP-initiated responses. Nothing binds
    such a response to the browser posting it, so anyone with a valid one for their own
    account can sign a visitor in as themselves (login CSRF)."""
    return [
        check_warning(
            "appframework_saml.W004",
            f"SAML provider {provider.name!r} accepts IdP-initiated responses "
            "(allow_idp_initiated=True): nothing ties such a response to the browser that "
            "posts it, so another site can sign its visitors in to an account of the "
            "attacker's (login CSRF).",
            "Set allow_idp_initiated=False unless users must start sign-in at the IdP; "
            "then sign-in starts at /saml/<name>/login.",
        )
        for provider in _static_providers()
        if provider.allow_idp_initiated
    ]


def check_replay_cache(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """W005: ``REPLAY_CACHE`` is per process with DEBUG off. Not only under ``--deploy``
    (where the core's W005 says it of every such cache): SAML does not merely weaken
    with several workers, it stops working, since the ACS POST seldom reaches the process
    that started the login, and a replay reaching another process is accepted."""
    from django.conf import settings

    if settings.DEBUG:
        return []  # the development server: one process
    section = app_settings.SAML
    providers = section.PROVIDERS
    if isinstance(providers, list | tuple) and not providers:
        return []  # nothing signs in through SAML (a factory may return providers)
    alias = resolved_alias(section.REPLAY_CACHE)
    if alias is None or not is_process_local(alias):
        return []  # AUTO on the database store, or a shared cache
    return [
        check_warning(
            "appframework_saml.W005",
            f"SAML['REPLAY_CACHE'] is cache {alias!r}, which each process keeps for itself "
            f"({cache_backend(alias).rsplit('.', 1)[-1]}): with several workers an IdP's answer "
            "rarely reaches the process that started the login (saml_invalid), and a "
            "replayed response reaching another process is accepted.",
            "Leave SAML['REPLAY_CACHE'] at AUTO (the default cache when it is shared, "
            f"else the suite's database store), or point CACHES[{alias!r}] or "
            "SAML['REPLAY_CACHE'] at a cache every process shares (Redis, Memcached).",
        )
    ]
