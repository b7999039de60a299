"""auth_required / api_auth_required on sync and async views."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import iscoroutinefunction
from django.test import AsyncClient, Client

from . import views
from .conftest import bearer, client_with_session, session_cookie_name

pytestmark = pytest.mark.urls("tests.auth.urls")


def async_client_with_session(cookie: str | None = None) -> AsyncClient:
    client = AsyncClient()
    if cookie is not None:
        client.cookies[session_cookie_name()] = cookie
    return client


# -- shape -------------------------------------------------------------------------------------
def test_auth_required_on_async_view_stays_a_coroutine_function() -> None:
    assert iscoroutinefunction(views.decorated_session_async)


def test_api_auth_required_on_async_view_stays_a_coroutine_function() -> None:
    assert iscoroutinefunction(views.decorated_api_async)


def test_decorators_on_sync_views_stay_sync() -> None:
    assert not iscoroutinefunction(views.decorated_session_sync)
    assert not iscoroutinefunction(views.decorated_api_sync)


def test_decorators_keep_the_view_name() -> None:
    assert views.decorated_session_sync.__name__ == "decorated_session_sync"
    assert views.decorated_session_async.__name__ == "decorated_session_async"
    assert views.decorated_api_sync.__name__ == "decorated_api_sync"
    assert views.decorated_api_async.__name__ == "decorated_api_async"


# -- auth_required -------------------------------------------------------------------------------
@pytest.mark.django_db
def test_auth_required_sync_view_anonymous_is_401(client: Client) -> None:
    response = client.get("/t/deco/session", HTTP_ACCEPT="application/json")
    assert response.status_code == 401
    assert response.json()["status"] == 401


@pytest.mark.django_db
def test_auth_required_sync_view_authenticated_is_200(session_cookie: str, user: Any) -> None:
    response = client_with_session(session_cookie).get("/t/deco/session")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db(transaction=True)
async def test_auth_required_async_view_anonymous_is_401() -> None:
    response = await async_client_with_session().get("/t/deco/asession")
    assert response.status_code == 401


@pytest.mark.django_db(transaction=True)
async def test_auth_required_async_view_authenticated_is_200(
    session_cookie: str, user: Any
) -> None:
    response = await async_client_with_session(session_cookie).get("/t/deco/asession")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db
def test_auth_required_async_view_through_sync_client_is_200_when_authenticated(
    session_cookie: str, user: Any
) -> None:
    response = client_with_session(session_cookie).get("/t/deco/asession")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db
def test_auth_required_with_session_and_authorization_header_is_401(
    session_cookie: str, token: str
) -> None:
    client = client_with_session(session_cookie)
    assert client.get("/t/deco/session", **bearer(token)).status_code == 401
    assert client.get("/t/deco/asession", **bearer(token)).status_code == 401


@pytest.mark.django_db
def test_auth_required_does_not_accept_a_bearer_token(client: Client, token: str) -> None:
    assert client.get("/t/deco/session", **bearer(token)).status_code == 401


# -- api_auth_required ---------------------------------------------------------------------------
@pytest.mark.django_db
def test_api_auth_required_sync_view_anonymous_is_401_with_www_authenticate(client: Client) -> None:
    response = client.get("/t/deco/api")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db
def test_api_auth_required_sync_view_with_token_is_200(
    client: Client, token: str, user: Any
) -> None:
    response = client.get("/t/deco/api", **bearer(token))
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db
def test_api_auth_required_sync_view_with_bad_token_is_401_invalid_token(client: Client) -> None:
    response = client.get("/t/deco/api", HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.django_db
def test_api_auth_required_sync_view_ignores_session_cookie(session_cookie: str) -> None:
    assert client_with_session(session_cookie).get("/t/deco/api").status_code == 401


@pytest.mark.django_db(transaction=True)
async def test_api_auth_required_async_view_anonymous_is_401_with_www_authenticate() -> None:
    response = await AsyncClient().get("/t/deco/aapi")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db(transaction=True)
async def test_api_auth_required_async_view_with_token_is_200(token: str, user: Any) -> None:
    response = await AsyncClient().get("/t/deco/aapi", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db(transaction=True)
async def test_api_auth_required_async_view_with_bad_token_is_401_invalid_token() -> None:
    response = await AsyncClient().get("/t/deco/aapi", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'
