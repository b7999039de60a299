"""Shared HTTP helpers: content negotiation and ``application/problem+json`` bodies."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

__all__ = [
    "APP_SESSION_ATTR",
    "PROBLEM_JSON",
    "asks_for_json",
    "client_ip",
    "has_authorization",
    "header_meta_key",
    "is_app_request",
    "problem_document",
    "problem_response",
    "safe_redirect_url",
    "set_request_user",
    "wants_json",
]


#: Set on a request served with an app session (``X-Session-Token``, the headless
#: SessionMiddleware): the token it came with, "" for none.
APP_SESSION_ATTR = "_appframework_app_session"


def is_app_request(request: HttpRequest) -> bool:
    """The request is an app's: its session came from ``X-Session-Token``, never from a
    cookie, so no other site can make it (no CSRF check applies)."""
    return hasattr(request, APP_SESSION_ATTR)


def has_authorization(request: HttpRequest) -> bool:
    """The request presents its own credential (``Authorization``): it is judged by that
    alone, never by the session cookie (and a browser cannot attach it cross-site, so it
    is exempt from CSRF)."""
    return "HTTP_AUTHORIZATION" in request.META


def wants_json(request: HttpRequest) -> bool:
    """True for API clients: JSON named in ``Accept``, a JSON body, or no HTML accepted.

    Browsers send ``text/html`` first, so they keep Django's HTML error pages; curl's
    ``*/*`` and fetch's ``application/json`` get problem details.
    """
    return asks_for_json(request) or "text/html" not in request.headers.get("Accept", "")


def asks_for_json(request: HttpRequest) -> bool:
    """True when the client names JSON (in ``Accept``, or as its body). Form pages answer
    JSON only then: a plain form post (curl's, a test client's) still gets the page."""
    return "json" in request.headers.get("Accept", "") or "json" in request.headers.get(
        "Content-Type", ""
    )


PROBLEM_JSON = "application/problem+json"
#: The policy of the suite's small HTML error page.
ERROR_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def problem_document(
    status: int, detail: Any, *, title: Any = None, code: str | None = None
) -> dict[str, Any]:
    """The RFC 9457 members every error of the suite carries: ``type``, ``title``,
    ``status``, ``detail`` and the stable ``code``. API framework adapters (DRF, ninja)
    build their bodies here too, so every view of a site answers the same document."""
    document: dict[str, Any] = {
        "type": "about:blank",
        "title": str(title or HTTPStatus(status).phrase),
        "status": status,
        "detail": str(detail),
    }
    if code:
        document["code"] = code
    return document


def problem_response(
    status: int,
    detail: Any,
    *,
    title: Any = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
    json_body: bool = True,
    login_url: str | None = None,
) -> HttpResponse:
    """An RFC 9457 problem document (or a short HTML page when ``json_body`` is false).

    ``title`` and ``detail`` may be lazy translations; ``code`` is the stable
    machine-readable name of the error (an extension member of the problem document).
    ``login_url``, on the HTML page only, is linked as the way forward (a 401).
    """
    title = str(title or HTTPStatus(status).phrase)
    detail = str(detail)
    if json_body:
        document = problem_document(status, detail, title=title, code=code)
        response = HttpResponse(json.dumps(document), status=status, content_type=PROBLEM_JSON)
    else:
        body = (
            f'<!doctype html><html lang="en"><meta charset="utf-8">'
            f"<title>{status} {escape(title)}</title>"
            f"<h1>{status} {escape(title)}</h1><p>{escape(detail)}</p>"
            + (f'<p><a href="{escape(login_url)}">Log in</a></p>' if login_url else "")
            + "</html>"
        )
        response = HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
        # The page has no script, style or frame to allow: nothing runs in it, whatever
        # a reflected detail might contain.
        response["Content-Security-Policy"] = ERROR_PAGE_CSP
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def set_request_user(request: HttpRequest, user: Any) -> None:
    """Make every reader of the request's user agree: ``request.user`` and
    ``await request.auser()`` (Django caches the latter separately, so resetting only
    ``request.user`` leaves async code seeing the old user)."""

    async def auser() -> Any:
        return user

    request.user = user
    request.auser = auser
    request._cached_user = user  # type: ignore[attr-defined]
    request._acached_user = user  # type: ignore[attr-defined]


def header_meta_key(name: str) -> str:
    """``X-Forwarded-For`` → ``HTTP_X_FORWARDED_FOR``, the key Django files it under."""
    return "HTTP_" + name.upper().replace("-", "_")


def _strip_port(address: str) -> str:
    # Some proxies write "ip:port" or "[v6]:port"; the port is not part of the client.
    if address.startswith("["):
        return address[1:].partition("]")[0]
    if address.count(":") == 1:
        return address.partition(":")[0]
    return address


def client_ip(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, unless ``RATE_LIMIT["CLIENT_IP_HEADER"]``
    names a header that trusted proxies append to (``X-Forwarded-For``).

    Of that header's comma-separated list the entry ``TRUSTED_PROXY_COUNT`` from the
    right is taken: the left part is written by the client and can say anything.
    """
    from .conf import app_settings

    header = app_settings.RATE_LIMIT.CLIENT_IP_HEADER
    remote = str(request.META.get("REMOTE_ADDR") or "")
    if not header:
        return _strip_port(remote.strip())
    raw = request.META.get(header_meta_key(str(header)), "")
    hops = [part.strip() for part in str(raw).split(",") if part.strip()]
    count = max(1, int(app_settings.RATE_LIMIT.TRUSTED_PROXY_COUNT))
    if len(hops) < count:
        return _strip_port(remote.strip())
    return _strip_port(hops[-count])


def safe_redirect_url(request: HttpRequest, url: Any, default: str) -> str:
    """``url`` when it stays on this site (same host; https when this request is), else
    ``default``. Every post-login redirect goes through here: a ``next`` or SAML
    ``RelayState`` pointing at another host would make the login page an open redirect."""
    from django.utils.http import url_has_allowed_host_and_scheme

    if (
        isinstance(url, str)
        and url
        and url_has_allowed_host_and_scheme(
            url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return url
    return default
