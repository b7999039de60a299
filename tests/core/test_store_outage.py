"""A shared store that cannot be reached (the Redis cache behind revocations and the
login throttle, the database) is a 503 with ``Retry-After`` in the one error format,
never a 500, and the request is refused: nothing the store would have checked is let
through. The Redis cache here points at a port nothing listens on; the sessions and the
throttle use it for real."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import OperationalError
from django.test import Client, override_settings

from appframework.errors import app_error, is_outage
from appframework.exceptions import ServiceUnavailableException


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nothing listens there


def _redis_down() -> Any:
    """Every cache alias on a Redis server that is not there (short timeouts); Django
    drops its cache connections when CACHES changes."""
    dead = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{_dead_port()}/0",
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
    return override_settings(CACHES={alias: dict(dead) for alias in settings.CACHES})


def test_a_redis_connection_error_is_an_outage_mapped_to_503() -> None:
    error = app_error(redis.exceptions.ConnectionError("refused"), log=False)
    assert isinstance(error, ServiceUnavailableException)
    assert error.status_code == 503
    assert error.response_headers() == {"Retry-After": "5"}
    assert error.code == "service_unavailable"


@pytest.mark.parametrize(
    "exception",
    [
        redis.exceptions.TimeoutError("slow"),
        redis.exceptions.BusyLoadingError("loading"),
        OperationalError("server closed the connection unexpectedly"),
    ],
)
def test_timeouts_a_loading_redis_and_a_lost_database_are_outages(exception: Any) -> None:
    assert is_outage(exception)


@pytest.mark.parametrize(
    "exception", [RuntimeError("bug"), redis.exceptions.ResponseError("WRONGTYPE")]
)
def test_a_bug_or_a_wrong_command_is_not_an_outage(exception: Any) -> None:
    assert not is_outage(exception)
    assert app_error(exception, log=False) is None  # stays a 500


@pytest.mark.django_db
def test_login_while_redis_is_down_is_503_and_signs_no_one_in(django_user_model: Any) -> None:
    user = django_user_model.objects.create_user(
        email="outage@example.com", password="a-long-passphrase-1"
    )
    with _redis_down():
        response = Client(raise_request_exception=False).post(
            "/login",
            {"email": user.email, "password": "a-long-passphrase-1"},
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 503, response.content[:300]
    assert response["Content-Type"].startswith("application/problem+json")
    assert response["Retry-After"] == "5"
    assert json.loads(response.content)["code"] == "service_unavailable"
    cookie = response.cookies.get(settings.SESSION_COOKIE_NAME)
    assert cookie is None or not cookie.value


@pytest.mark.django_db
def test_a_signed_in_request_while_redis_is_down_is_503_not_served_as_signed_in(
    django_user_model: Any,
) -> None:
    """The session's revocation record is read by a middleware, outside any view: the
    project's handler500 (the suite's ``server_error``) makes it the 503."""
    client = Client(raise_request_exception=False)
    user = django_user_model.objects.create_user(
        email="outage2@example.com", password="a-long-passphrase-2"
    )
    client.force_login(user)
    assert client.get("/account/mfa").status_code == 200

    with _redis_down():
        response = client.get("/account/mfa", HTTP_ACCEPT="text/html")
    html = response.content.decode()
    assert response.status_code == 503, html[:300]
    assert response["Retry-After"] == "5"
    assert "outage2@example.com" not in html
    assert "Service Unavailable" in html


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False], ids=["debug", "no-debug"])
@pytest.mark.parametrize("credential", ["bearer", "session"])
@pytest.mark.parametrize("path", ["/api/me", "/api/drf/posts/", "/api/ninja/posts", "/posts"])
def test_requests_through_the_demos_middleware_during_an_outage_are_503_under_debug_too(
    user: Any, demo_stack: None, debug: bool, credential: str, path: str
) -> None:
    """The tenant resolver and the CSRF middleware read the user before any view runs;
    an outage there answered by Django would be its 500 (the debug page, settings
    included, under DEBUG): they answer the 503 themselves."""
    from appframework.auth import TokenManager
    from tests.conftest import login_client

    client = Client(raise_request_exception=False)
    headers = {"HTTP_ACCEPT": "application/json"}
    if credential == "bearer":
        headers["HTTP_AUTHORIZATION"] = f"Bearer {TokenManager().issue(user)}"
    else:
        login_client(client, user)
    with override_settings(DEBUG=debug), _redis_down():
        response = client.get(path, **headers)
    assert response.status_code == 503, response.content[:200]
    assert response.json()["code"] == "service_unavailable"
    assert response["Retry-After"] == "5"


@pytest.mark.django_db(transaction=True)
async def test_an_async_stack_during_an_outage_is_503_under_debug(
    user: Any, demo_stack: None
) -> None:
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from appframework.auth import TokenManager

    token = await sync_to_async(TokenManager().issue)(user)
    with override_settings(DEBUG=True), _redis_down():
        response = await AsyncClient(raise_request_exception=False).get(
            "/api/me", headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
        )
    assert response.status_code == 503
