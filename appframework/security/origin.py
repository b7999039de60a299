"""Where an unsafe request comes from: Django's ``Origin``/``Referer`` rule.

A request that names its origin (``Origin``) must name this site (scheme and host of
the request) or one of ``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com`` allows the
subdomains). Over HTTPS a request without ``Origin`` must carry a ``Referer`` on this
site or a trusted host: a man in the middle on plain HTTP could otherwise forge both
the cookie and the token. Same rule and same setting as Django's ``CsrfViewMiddleware``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest
from django.utils.http import is_same_domain
from django.utils.translation import gettext_lazy as _

from ..conf import derived_setting

__all__ = ["origin_problem"]

REASON_BAD_ORIGIN = _("Origin checking failed: the request comes from another site.")
REASON_NO_REFERER = _("Referer checking failed: no Referer on an HTTPS request.")
REASON_BAD_REFERER = _("Referer checking failed: the Referer is another site.")
REASON_INSECURE_REFERER = _("Referer checking failed: an HTTPS request with a plain-HTTP Referer.")


@derived_setting
def _trusted() -> tuple[frozenset[str], dict[str, tuple[str, ...]], tuple[str, ...]]:
    """Exact origins, wildcard subdomains per scheme, and hosts for the Referer rule."""
    origins = tuple(getattr(settings, "CSRF_TRUSTED_ORIGINS", ()))
    exact = frozenset(origin for origin in origins if "*" not in origin)
    wildcard: dict[str, list[str]] = {}
    for origin in origins:
        if "*" in origin:
            scheme, _sep, netloc = origin.partition("://")
            wildcard.setdefault(scheme, []).append(netloc.lstrip("*"))
    hosts = tuple(urlsplit(origin).netloc.lstrip("*") for origin in origins)
    return exact, {k: tuple(v) for k, v in wildcard.items()}, hosts


def _origin_ok(request: HttpRequest, origin: str) -> bool:
    exact, wildcard, _hosts = _trusted()
    try:
        own = f"{'https' if request.is_secure() else 'http'}://{request.get_host()}"
    except DisallowedHost:
        own = None
    if origin == own or origin in exact:
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    return any(is_same_domain(parsed.netloc, host) for host in wildcard.get(parsed.scheme, ()))


def _referer_problem(request: HttpRequest) -> str | None:
    referer = request.META.get("HTTP_REFERER")
    if not referer:
        return "csrf_referer_missing"
    try:
        parsed = urlsplit(referer)
    except ValueError:
        return "csrf_referer_mismatch"
    if not parsed.scheme or not parsed.netloc:
        return "csrf_referer_mismatch"
    if parsed.scheme != "https":
        return "csrf_referer_insecure"
    if any(is_same_domain(parsed.netloc, host) for host in _trusted()[2]):
        return None
    good = settings.CSRF_COOKIE_DOMAIN
    if good is None:
        try:
            good = request.get_host()
        except DisallowedHost:
            return "csrf_referer_mismatch"
    else:
        port = request.get_port()
        if port not in ("443", "80"):
            good = f"{good}:{port}"
    return None if is_same_domain(parsed.netloc, good) else "csrf_referer_mismatch"


REASONS = {
    "csrf_origin_mismatch": REASON_BAD_ORIGIN,
    "csrf_referer_missing": REASON_NO_REFERER,
    "csrf_referer_mismatch": REASON_BAD_REFERER,
    "csrf_referer_insecure": REASON_INSECURE_REFERER,
}


def origin_problem(request: HttpRequest) -> str | None:
    """The failure code when the request comes from a foreign origin, else None."""
    origin = request.META.get("HTTP_ORIGIN")
    if origin is not None:
        return None if _origin_ok(request, origin) else "csrf_origin_mismatch"
    if request.is_secure():
        return _referer_problem(request)
    return None
