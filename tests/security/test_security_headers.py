"""SecurityHeadersMiddleware: the default headers (nosniff, DENY,
strict-origin-when-cross-origin; no CSP or HSTS unless configured), each setting, and
the headers on every response: errors, CSRF rejections, async views, and HSTS behind a
TLS-terminating proxy."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import AsyncClient, Client, override_settings

from appframework.security import SecurityHeadersMiddleware

from .helpers import URLS

pytestmark = [pytest.mark.urls(URLS)]


def _headers(**overrides: Any) -> Any:
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("SECURITY_HEADERS", {}).update(overrides)
    return override_settings(APPFRAMEWORK=app)


def test_middleware_is_installed_in_the_test_project() -> None:
    assert "appframework.security.SecurityHeadersMiddleware" in settings.MIDDLEWARE
    assert SecurityHeadersMiddleware.__module__ == "appframework.security.headers"


class TestDefaults:
    @pytest.fixture
    def response(self, client: Client) -> Any:
        return client.get("/sec/plain")

    def test_x_content_type_options_nosniff(self, response: Any) -> None:
        assert response["X-Content-Type-Options"] == "nosniff"

    def test_x_frame_options_deny(self, response: Any) -> None:
        assert response["X-Frame-Options"] == "DENY"

    def test_referrer_policy(self, response: Any) -> None:
        assert response["Referrer-Policy"] == "strict-origin-when-cross-origin"

    def test_no_content_security_policy(self, response: Any) -> None:
        assert "Content-Security-Policy" not in response

    def test_no_strict_transport_security(self, response: Any) -> None:
        assert "Strict-Transport-Security" not in response

    def test_no_hsts_on_https_by_default(self, client: Client) -> None:
        response = client.get("/sec/plain", secure=True)
        assert "Strict-Transport-Security" not in response


@pytest.mark.parametrize(
    "path,status", [("/sec/plain", 200), ("/no-such-page", 404), ("/token", 405)]
)
def test_headers_on_every_response(client: Client, path: str, status: int, db: Any) -> None:
    response = client.get(path)
    assert response.status_code == status
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"


def test_headers_on_csrf_rejection(csrf_client: Client, user: Any) -> None:
    from tests.conftest import login_client

    login_client(csrf_client, user)
    response = csrf_client.post("/sec/echo", {}, content_type="application/json")
    assert response.status_code == 403
    assert response["X-Frame-Options"] == "DENY"


def test_csp_set_sends_header(client: Client) -> None:
    policy = "default-src 'self'; frame-ancestors 'none'"
    with _headers(CSP=policy):
        response = client.get("/sec/plain")
    assert response["Content-Security-Policy"] == policy


def test_frame_options_sameorigin(client: Client) -> None:
    with _headers(FRAME_OPTIONS="SAMEORIGIN"):
        assert client.get("/sec/plain")["X-Frame-Options"] == "SAMEORIGIN"


@pytest.mark.parametrize("off", [False, None, ""])
def test_frame_options_off_omits_header(client: Client, off: Any) -> None:
    with _headers(FRAME_OPTIONS=off):
        assert "X-Frame-Options" not in client.get("/sec/plain")


def test_content_type_options_false_omits_header(client: Client, settings: Any) -> None:
    # Django's SecurityMiddleware (kept in the stack) has its own switch for the header.
    settings.SECURE_CONTENT_TYPE_NOSNIFF = False
    with _headers(CONTENT_TYPE_OPTIONS=False):
        response = client.get("/sec/plain")
    assert "X-Content-Type-Options" not in response
    assert response["X-Frame-Options"] == "DENY"


def test_referrer_policy_no_referrer(client: Client) -> None:
    with _headers(REFERRER_POLICY="no-referrer"):
        assert client.get("/sec/plain")["Referrer-Policy"] == "no-referrer"


def test_hsts_on_secure_request(client: Client) -> None:
    with _headers(HSTS=True):
        response = client.get("/sec/plain", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000"


def test_hsts_absent_on_plain_http(client: Client) -> None:
    with _headers(HSTS=True):
        response = client.get("/sec/plain")
    assert "Strict-Transport-Security" not in response


def test_hsts_max_age(client: Client) -> None:
    with _headers(HSTS=True, HSTS_MAX_AGE=60):
        response = client.get("/sec/plain", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=60"


def test_hsts_max_age_alone_does_not_turn_hsts_on(client: Client) -> None:
    with _headers(HSTS_MAX_AGE=60):
        response = client.get("/sec/plain", secure=True)
    assert "Strict-Transport-Security" not in response


def test_settings_change_seen_without_restart(client: Client) -> None:
    assert client.get("/sec/plain")["X-Frame-Options"] == "DENY"
    with _headers(FRAME_OPTIONS="SAMEORIGIN"):
        assert client.get("/sec/plain")["X-Frame-Options"] == "SAMEORIGIN"
    assert client.get("/sec/plain")["X-Frame-Options"] == "DENY"


def test_header_set_by_the_view_is_kept(client: Client) -> None:
    with _headers(CSP="default-src 'self'"):
        response = client.get("/sec/own-headers")
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert response["X-Content-Type-Options"] == "custom"


def test_hsts_set_by_the_view_is_kept() -> None:
    from django.http import HttpResponse
    from django.test import RequestFactory

    def view(request: Any) -> HttpResponse:
        response = HttpResponse("x")
        response["Strict-Transport-Security"] = "max-age=5"
        return response

    with _headers(HSTS=True):
        response = SecurityHeadersMiddleware(view)(RequestFactory().get("/", secure=True))
    assert response["Strict-Transport-Security"] == "max-age=5"


async def test_async_view_gets_the_headers() -> None:
    response = await AsyncClient().get("/sec/async-plain")
    assert response.status_code == 200
    assert response.content == b"async plain"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "strict-origin-when-cross-origin"
    assert "Content-Security-Policy" not in response


async def test_async_view_with_overrides_and_hsts() -> None:
    with _headers(HSTS=True, HSTS_MAX_AGE=60, CSP="default-src 'self'", FRAME_OPTIONS="SAMEORIGIN"):
        response = await AsyncClient().get("/sec/async-plain", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=60"
    assert response["Content-Security-Policy"] == "default-src 'self'"
    assert response["X-Frame-Options"] == "SAMEORIGIN"


def test_sync_view_through_async_client_gets_the_headers(client: Client) -> None:
    from asgiref.sync import async_to_sync

    response = async_to_sync(AsyncClient().get)("/sec/plain")
    assert response["X-Frame-Options"] == "DENY"


async def test_middleware_is_async_capable_with_async_get_response() -> None:
    from asgiref.sync import iscoroutinefunction
    from django.http import HttpResponse
    from django.test import RequestFactory

    async def view(request: Any) -> HttpResponse:
        return HttpResponse("x")

    middleware = SecurityHeadersMiddleware(view)
    assert iscoroutinefunction(middleware)
    response = await middleware(RequestFactory().get("/"))
    assert response["X-Frame-Options"] == "DENY"


def test_hsts_behind_tls_terminating_proxy(client: Client) -> None:
    with (
        _headers(HSTS=True),
        override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")),
    ):
        proxied = client.get("/sec/plain", HTTP_X_FORWARDED_PROTO="https")
        plain = client.get("/sec/plain", HTTP_X_FORWARDED_PROTO="http")
    assert proxied["Strict-Transport-Security"] == "max-age=31536000"
    assert "Strict-Transport-Security" not in plain
