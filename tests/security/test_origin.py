"""The Origin/Referer rule of the CSRF check (``appframework/security/origin.py``).

Every unsafe request the CSRF check covers — here: a session cookie and a valid token —
must also come from this site (``http://testserver``, or ``https://testserver`` over
HTTPS) or from one of ``CSRF_TRUSTED_ORIGINS``. ``Origin`` decides when present; over
HTTPS without it a ``Referer`` on this site is required. Requests the CSRF check exempts
are not origin-checked either, and ``APPFRAMEWORK["CSRF"]["CHECK_ORIGIN"] = False`` turns
the rule off.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from appframework.security.csrf import REASONS
from tests.conftest import demo_tenant, login_client

from .helpers import (
    COOKIE,
    HEADER,
    HTML_ACCEPT,
    JSON_ACCEPT,
    UNSAFE,
    URLS,
    anonymous_session_cookie,
    prime,
    send_form,
    send_json,
)

pytestmark = [pytest.mark.urls(URLS)]

OWN = "http://testserver"
OWN_TLS = "https://testserver"
EVIL = "https://evil.example"


@pytest.fixture
def session_client(csrf_client: Client) -> Client:
    """A CSRF-enforcing client with a (pre-login) session cookie and a valid CSRF cookie."""
    anonymous_session_cookie(csrf_client)
    prime(csrf_client)
    return csrf_client


def post(client: Client, path: str = "/sec/echo", **extra: Any) -> Any:
    """An unsafe JSON request carrying the valid token (so only the origin can fail)."""
    token = client.cookies[COOKIE].value
    method = extra.pop("method", "POST")
    return send_json(client, method, path, **{HEADER: token}, **JSON_ACCEPT, **extra)


def failure_code(response: Any) -> str:
    assert response.status_code == 403, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 403
    assert body["title"] == "CSRF verification failed"
    assert body["detail"] == str(REASONS[body["code"]])
    return str(body["code"])


def _csrf(**csrf: Any) -> dict[str, Any]:
    base = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    base.setdefault("CSRF", {}).update(csrf)
    return base


# -- Origin ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", UNSAFE)
def test_own_origin_passes(session_client: Client, method: str) -> None:
    response = post(session_client, HTTP_ORIGIN=OWN, method=method)
    assert response.status_code == 200
    assert response.json()["method"] == method


@pytest.mark.parametrize("method", UNSAFE)
def test_foreign_origin_is_403_even_with_a_valid_token(session_client: Client, method: str) -> None:
    response = post(session_client, HTTP_ORIGIN=EVIL, method=method)
    assert failure_code(response) == "csrf_origin_mismatch"


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://testserver",  # another scheme
        "http://testserver:8080",  # another port
        "http://sub.testserver",
        "http://testserver.evil.example",
        "http://evil.example/http://testserver",
        "null",  # sandboxed iframes, data: URLs, some redirects
        "",
        "not an origin",
    ],
)
def test_any_other_origin_is_refused(session_client: Client, origin: str) -> None:
    assert failure_code(post(session_client, HTTP_ORIGIN=origin)) == "csrf_origin_mismatch"


def test_origin_is_checked_before_the_token(session_client: Client) -> None:
    response = send_json(session_client, "POST", HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert failure_code(response) == "csrf_origin_mismatch"


def test_origin_check_applies_to_async_views(session_client: Client) -> None:
    assert post(session_client, "/sec/async-echo", HTTP_ORIGIN=OWN).status_code == 200
    refused = post(session_client, "/sec/async-echo", HTTP_ORIGIN=EVIL)
    assert failure_code(refused) == "csrf_origin_mismatch"


def test_foreign_origin_form_post_from_a_browser_gets_the_html_failure_page(
    session_client: Client,
) -> None:
    token = session_client.cookies[COOKIE].value
    response = send_form(session_client, "POST", {"_token": token}, HTTP_ORIGIN=EVIL, **HTML_ACCEPT)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


def test_plain_http_without_origin_needs_no_referer(session_client: Client) -> None:
    assert post(session_client).status_code == 200
    # Without Origin, plain HTTP is not Referer-checked (as in Django).
    assert post(session_client, HTTP_REFERER="http://evil.example/").status_code == 200


# -- CSRF_TRUSTED_ORIGINS ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://app.example.com", True),
        ("http://app.example.com", False),  # the scheme is part of the origin
        ("https://app.example.com:8443", False),
        ("https://other.example.com", False),
        ("https://sub.app.example.com", False),  # exact entries allow no subdomains
        (OWN, True),  # the request's own origin stays allowed
    ],
)
def test_exact_trusted_origin(session_client: Client, origin: str, allowed: bool) -> None:
    with override_settings(CSRF_TRUSTED_ORIGINS=["https://app.example.com"]):
        response = post(session_client, HTTP_ORIGIN=origin)
    if allowed:
        assert response.status_code == 200
    else:
        assert failure_code(response) == "csrf_origin_mismatch"


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://a.example.com", True),
        ("https://a.b.example.com", True),
        ("http://a.example.com", False),  # wildcard is per scheme
        ("https://evilexample.com", False),
        ("https://a.example.com.evil.net", False),
        ("https://example.com.evil.net", False),
        ("https://a.example.org", False),
    ],
)
def test_wildcard_trusted_origin_allows_subdomains_only(
    session_client: Client, origin: str, allowed: bool
) -> None:
    with override_settings(CSRF_TRUSTED_ORIGINS=["https://*.example.com"]):
        response = post(session_client, HTTP_ORIGIN=origin)
    if allowed:
        assert response.status_code == 200
    else:
        assert failure_code(response) == "csrf_origin_mismatch"


def test_trusted_origins_follow_override_settings(session_client: Client) -> None:
    origin = "https://partner.example"
    assert failure_code(post(session_client, HTTP_ORIGIN=origin)) == "csrf_origin_mismatch"
    with override_settings(CSRF_TRUSTED_ORIGINS=[origin]):
        assert post(session_client, HTTP_ORIGIN=origin).status_code == 200
    assert failure_code(post(session_client, HTTP_ORIGIN=origin)) == "csrf_origin_mismatch"


# -- HTTPS: Referer when there is no Origin ----------------------------------------------------------
@pytest.fixture
def tls_client(csrf_client: Client) -> Client:
    """Like ``session_client``, with its cookies obtained over HTTPS."""
    anonymous_session_cookie(csrf_client)
    assert csrf_client.get("/sec/token-only", secure=True).status_code == 200
    return csrf_client


def test_https_without_origin_or_referer_is_403(tls_client: Client) -> None:
    assert failure_code(post(tls_client, secure=True)) == "csrf_referer_missing"


@pytest.mark.parametrize(
    "referer",
    [
        "https://evil.example/page",
        "https://testserver.evil.example/",
        "https://sub.testserver/",  # no CSRF_COOKIE_DOMAIN: only the host itself
        "https://",
        "testserver/page",  # no scheme
        "//testserver/page",
        "https://[broken/",
    ],
)
def test_https_with_a_foreign_or_malformed_referer_is_403(tls_client: Client, referer: str) -> None:
    response = post(tls_client, secure=True, HTTP_REFERER=referer)
    assert failure_code(response) == "csrf_referer_mismatch"


def test_https_with_a_plain_http_referer_is_403(tls_client: Client) -> None:
    response = post(tls_client, secure=True, HTTP_REFERER="http://testserver/form")
    assert failure_code(response) == "csrf_referer_insecure"


@pytest.mark.parametrize("referer", ["https://testserver/form", "https://testserver/"])
def test_https_with_a_same_site_referer_passes(tls_client: Client, referer: str) -> None:
    assert post(tls_client, secure=True, HTTP_REFERER=referer).status_code == 200


def test_https_referer_of_a_trusted_origin_passes(tls_client: Client) -> None:
    trusted = ["https://app.example.com", "https://*.partner.example"]
    with override_settings(CSRF_TRUSTED_ORIGINS=trusted):
        ok_exact = post(tls_client, secure=True, HTTP_REFERER="https://app.example.com/x")
        ok_wild = post(tls_client, secure=True, HTTP_REFERER="https://a.partner.example/x")
        refused = post(tls_client, secure=True, HTTP_REFERER="https://evil.example/x")
    assert ok_exact.status_code == 200
    assert ok_wild.status_code == 200
    assert failure_code(refused) == "csrf_referer_mismatch"


def test_https_referer_on_the_csrf_cookie_domain_passes(tls_client: Client) -> None:
    with override_settings(CSRF_COOKIE_DOMAIN=".testserver", ALLOWED_HOSTS=[".testserver"]):
        ok = post(tls_client, secure=True, HTTP_REFERER="https://app.testserver/form")
        refused = post(tls_client, secure=True, HTTP_REFERER="https://evil.example/form")
    assert ok.status_code == 200
    assert failure_code(refused) == "csrf_referer_mismatch"


def test_https_origin_decides_over_referer(tls_client: Client) -> None:
    assert post(tls_client, secure=True, HTTP_ORIGIN=OWN_TLS).status_code == 200
    same_site_referer = post(
        tls_client, secure=True, HTTP_ORIGIN=EVIL, HTTP_REFERER="https://testserver/"
    )
    assert failure_code(same_site_referer) == "csrf_origin_mismatch"
    downgraded = post(tls_client, secure=True, HTTP_ORIGIN=OWN)
    assert failure_code(downgraded) == "csrf_origin_mismatch"


# -- what is not origin-checked ----------------------------------------------------------------------
@pytest.mark.parametrize("method", UNSAFE)
def test_request_with_authorization_header_is_not_origin_checked(
    session_client: Client, method: str
) -> None:
    response = send_json(
        session_client, method, HTTP_AUTHORIZATION="Bearer x", HTTP_ORIGIN=EVIL, **JSON_ACCEPT
    )
    assert response.status_code == 200


def test_request_without_session_cookie_is_not_origin_checked(csrf_client: Client) -> None:
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies
    response = send_json(csrf_client, "POST", HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert response.status_code == 200
    tls = send_json(csrf_client, "POST", secure=True, **JSON_ACCEPT)
    assert tls.status_code == 200


def test_csrf_exempt_view_is_not_origin_checked(session_client: Client) -> None:
    response = send_json(session_client, "POST", "/sec/exempt", HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert response.status_code == 200


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_safe_methods_are_not_origin_checked(session_client: Client, method: str) -> None:
    response = session_client.generic(method, "/sec/echo", HTTP_ORIGIN=EVIL, secure=True)
    assert response.status_code == 200


def test_csrf_exempt_predicate_requests_are_not_origin_checked(session_client: Client) -> None:
    app = _csrf()
    app.setdefault("AUTH", {})["CSRF_EXEMPT"] = "tests.security.views.exempt_hooks"
    with override_settings(APPFRAMEWORK=app):
        hook = send_json(session_client, "POST", "/sec/hooks/x", HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
        other = post(session_client, HTTP_ORIGIN=EVIL)
    assert hook.status_code == 200
    assert failure_code(other) == "csrf_origin_mismatch"


# -- CHECK_ORIGIN=False ------------------------------------------------------------------------------
def test_check_origin_false_switches_the_origin_rule_off(session_client: Client) -> None:
    with override_settings(APPFRAMEWORK=_csrf(CHECK_ORIGIN=False)):
        foreign = post(session_client, HTTP_ORIGIN=EVIL)
        null = post(session_client, HTTP_ORIGIN="null")
    assert foreign.status_code == 200
    assert null.status_code == 200


def test_check_origin_false_switches_the_https_referer_rule_off(tls_client: Client) -> None:
    with override_settings(APPFRAMEWORK=_csrf(CHECK_ORIGIN=False)):
        missing = post(tls_client, secure=True)
        insecure = post(tls_client, secure=True, HTTP_REFERER="http://testserver/")
    assert missing.status_code == 200
    assert insecure.status_code == 200


def test_check_origin_false_still_checks_the_token(session_client: Client) -> None:
    with override_settings(APPFRAMEWORK=_csrf(CHECK_ORIGIN=False)):
        response = send_json(session_client, "POST", HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert failure_code(response) == "csrf_token_missing"


# -- the attack --------------------------------------------------------------------------------------
def test_attack_cross_site_post_with_a_valid_token_is_refused(
    csrf_client: Client, user: Any
) -> None:
    """The token check alone would pass (say the token leaked, or a sibling site can read
    the cookie); the browser's Origin still gives the forgery away."""
    user.tenants.add(demo_tenant())  # the demo lets members of the tenant write
    login_client(csrf_client, user)
    token = prime(csrf_client)
    forged = send_json(
        csrf_client,
        "POST",
        "/posts",
        **{HEADER: token},
        HTTP_ORIGIN=EVIL,
        HTTP_SEC_FETCH_SITE="cross-site",
        **JSON_ACCEPT,
    )
    assert failure_code(forged) == "csrf_origin_mismatch"
    from testproject.blog.models import Post

    assert not Post.objects.exists()
    genuine = csrf_client.post(
        "/posts",
        {"title": "mine"},
        content_type="application/json",
        **{HEADER: token},
        HTTP_ORIGIN=OWN,
    )
    assert genuine.status_code == 201
