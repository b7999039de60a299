"""The auth stack under the real ASGI application and the real WSGI application."""

from __future__ import annotations

import io
from http.cookies import SimpleCookie
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client

from .conftest import asgi_request, session_cookie_name

pytestmark = pytest.mark.urls("tests.auth.urls")


def _cookies(headers: dict[bytes, list[bytes]]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for raw in headers.get(b"set-cookie", []):
        jar.load(raw.decode("latin-1"))
    return {name: morsel.value for name, morsel in jar.items()}


def _cookie_header(cookies: dict[str, str]) -> tuple[bytes, bytes]:
    return (b"cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()).encode("latin-1"))


@pytest.fixture
def asgi_app() -> Any:
    from testproject.asgi import application

    return application


# -- ASGI ---------------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_asgi_app_form_login_then_session_then_logout(
    asgi_app: Any, user: Any, password: str
) -> None:
    status, headers, _ = await asgi_request(asgi_app, "GET", "/login")
    assert status == 200
    cookies = _cookies(headers)
    csrf = cookies["csrf_token"]

    body = f"email={user.email}&password={password.replace(' ', '+')}&_token={csrf}".encode()
    status, headers, _ = await asgi_request(
        asgi_app,
        "POST",
        "/login",
        [(b"content-type", b"application/x-www-form-urlencoded"), _cookie_header(cookies)],
        body,
    )
    assert status == 302
    cookies.update(_cookies(headers))
    assert cookies[session_cookie_name()]

    status, _, content = await asgi_request(
        asgi_app, "GET", "/t/awhoami", [_cookie_header(cookies)]
    )
    assert status == 200
    assert b'"current_user": %d' % user.pk in content

    status, headers, _ = await asgi_request(
        asgi_app,
        "POST",
        "/logout",
        [(b"x-csrf-token", cookies["csrf_token"].encode()), _cookie_header(cookies)],
    )
    assert status == 302
    cookies.update(_cookies(headers))
    status, _, content = await asgi_request(
        asgi_app, "GET", "/t/awhoami", [_cookie_header(cookies)]
    )
    assert b'"current_user": null' in content


@pytest.mark.django_db(transaction=True)
async def test_asgi_app_api_me_accepts_bearer_token(asgi_app: Any, token: str, user: Any) -> None:
    status, headers, content = await asgi_request(
        asgi_app, "GET", "/api/me", [(b"authorization", f"Bearer {token}".encode())]
    )
    assert status == 200
    assert headers[b"content-type"] == [b"application/json"]
    assert f'"id": {user.pk}'.encode() in content


@pytest.mark.django_db(transaction=True)
async def test_asgi_app_api_me_without_token_is_401_with_www_authenticate(asgi_app: Any) -> None:
    status, headers, _ = await asgi_request(asgi_app, "GET", "/api/me")
    assert status == 401
    assert headers[b"www-authenticate"] == [b"Bearer"]


@pytest.mark.django_db(transaction=True)
async def test_asgi_app_non_latin_bearer_bytes_are_401_not_500(asgi_app: Any) -> None:
    status, headers, _ = await asgi_request(
        asgi_app, "GET", "/api/me", [(b"authorization", "Bearer tökén".encode())]
    )
    assert status == 401
    assert headers[b"www-authenticate"] == [b'Bearer error="invalid_token"']


@pytest.mark.django_db(transaction=True)
async def test_asgi_app_session_ignored_when_authorization_header_present(
    asgi_app: Any, session_cookie: str, user: Any
) -> None:
    cookie = _cookie_header({session_cookie_name(): session_cookie})
    _, _, content = await asgi_request(asgi_app, "GET", "/t/awhoami", [cookie])
    assert b'"current_user": %d' % user.pk in content
    _, _, content = await asgi_request(
        asgi_app, "GET", "/t/awhoami", [cookie, (b"authorization", b"Bearer x")]
    )
    assert b'"current_user": null' in content


@pytest.mark.django_db(transaction=True)
async def test_asgi_app_error_middleware_answers_problem_json(asgi_app: Any) -> None:
    status, headers, content = await asgi_request(
        asgi_app, "GET", "/t/araise/too-many", [(b"accept", b"application/json")]
    )
    assert status == 429
    assert headers[b"content-type"] == [b"application/problem+json"]
    assert headers[b"retry-after"] == [b"3"]
    assert b'"status": 429' in content


# -- WSGI ------------------------------------------------------------------------------------------
def _wsgi_get(path: str, **extra: str) -> tuple[str, dict[str, str], bytes]:
    from testproject.wsgi import application

    environ: dict[str, Any] = {
        "PATH_INFO": path,
        "REQUEST_METHOD": "GET",
        "HTTP_HOST": "testserver",
    }
    environ.update(extra)
    setup_testing_defaults(environ)
    environ["wsgi.input"] = io.BytesIO(b"")
    captured: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        captured["status"], captured["headers"] = status, dict(headers)

    # As Django's test Client does: keep the request signals from closing the test's
    # connection (it holds the test transaction on PostgreSQL).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        result = application(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            getattr(result, "close", lambda: None)()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return captured["status"], captured["headers"], body


@pytest.mark.django_db
def test_wsgi_app_api_me_accepts_bearer_token(token: str, user: Any) -> None:
    status, _headers, body = _wsgi_get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert status.startswith("200")
    assert f'"id": {user.pk}'.encode() in body


@pytest.mark.django_db
def test_wsgi_app_api_me_without_token_is_401_with_www_authenticate() -> None:
    status, headers, _ = _wsgi_get("/api/me")
    assert status.startswith("401")
    assert headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db
def test_wsgi_app_session_cookie_authenticates_sync_view(session_cookie: str, user: Any) -> None:
    status, _, body = _wsgi_get(
        "/t/whoami", HTTP_COOKIE=f"{session_cookie_name()}={session_cookie}"
    )
    assert status.startswith("200")
    assert b'"current_user": %d' % user.pk in body


@pytest.mark.django_db
def test_wsgi_client_login_session_token_api_roundtrip(user: Any, password: str) -> None:
    client = Client(enforce_csrf_checks=True)
    client.get("/login")
    response = client.post(
        "/login",
        {"email": user.email, "password": password, "_token": client.cookies["csrf_token"].value},
    )
    assert response.status_code == 302
    token = client.post("/token", HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value).json()[
        "token"
    ]
    assert Client().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}").json() == {
        "id": user.pk,
        "email": user.email,
    }
