"""Async ninja operations under ASGI (django.test.AsyncClient): BearerAuth and
SessionAuth (sync auth callables that ninja runs in a thread) and the async gate."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient, Client

from appframework.auth import TokenManager
from testproject.blog.models import Post
from tests.conftest import csrf_cookie, login_client

from .conftest import problem

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.urls("tests.contrib_ninja.urls"),
]

ACCEPT = {"Accept": "application/json"}


@pytest.fixture(autouse=True)
async def _close_worker_connections() -> AsyncIterator[None]:
    """The ORM's async calls use asgiref's worker thread: close what it opened, so the
    test database can be dropped at the end of the run."""
    yield
    await sync_to_async(connections.close_all)()


def _bearer(user: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {TokenManager().issue(user)}", **ACCEPT}


def _signed_in(user: Any) -> Client:
    client = login_client(Client(enforce_csrf_checks=True), user)
    csrf_cookie(client)
    return client


async def _session_client(user: Any) -> tuple[AsyncClient, str]:
    """An ASGI client carrying ``user``'s signed-in session, and its CSRF token."""
    sync_client = await sync_to_async(_signed_in)(user)
    client = AsyncClient(enforce_csrf_checks=True)
    client.cookies = sync_client.cookies
    return client, sync_client.cookies["csrf_token"].value


async def test_an_async_operation_under_asgi_authenticates_a_bearer_token(user: Any) -> None:
    response = await AsyncClient().get("/t/ame", headers=_bearer(user))
    assert response.status_code == 200, response.content
    assert response.json() == {"id": user.pk, "email": user.email, "type": "User"}


async def test_an_async_operation_under_asgi_refuses_a_revoked_token(user: Any) -> None:
    token = TokenManager().issue(user)
    TokenManager().revoke(token)
    response = await AsyncClient().get(
        "/t/ame", headers={"Authorization": f"Bearer {token}", **ACCEPT}
    )
    problem(response, 401, "invalid_token")
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


async def test_an_async_operation_under_asgi_authenticates_a_session(user: Any) -> None:
    client, _ = await _session_client(user)
    response = await client.get("/t/ame", headers=ACCEPT)
    assert response.status_code == 200, response.content
    assert response.json() == {"id": user.pk, "email": user.email, "type": "User"}


async def test_an_async_operation_under_asgi_is_401_for_anonymous() -> None:
    problem(await AsyncClient().get("/t/ame", headers=ACCEPT), 401, "not_authenticated")


@pytest.mark.parametrize("url", ["/t/aposts/{}", "/t/aopen-posts/{}"])
async def test_the_async_gate_under_asgi_with_a_bearer_token_answers_403_404_401_and_204(
    url: str, user: Any, other_user: Any
) -> None:
    mine = await Post.objects.acreate(title="mine", author=user)
    theirs = await Post.objects.acreate(title="theirs", author=other_user)
    client = AsyncClient()
    problem(
        await client.delete(url.format(theirs.pk), headers=_bearer(user)), 403, "ability_denied"
    )
    problem(await client.delete(url.format(999999), headers=_bearer(user)), 404, "not_found")
    problem(await client.delete(url.format(mine.pk), headers=ACCEPT), 401, "not_authenticated")
    response = await client.delete(url.format(mine.pk), headers=_bearer(user))
    assert response.status_code == 204, response.content
    assert not await Post.objects.filter(pk=mine.pk).aexists()
    assert await Post.objects.filter(pk=theirs.pk).aexists()


@pytest.mark.parametrize("url", ["/t/aposts/{}", "/t/aopen-posts/{}"])
async def test_the_async_gate_under_asgi_lets_the_author_delete_with_a_session(
    url: str, user: Any
) -> None:
    mine = await Post.objects.acreate(title="mine", author=user)
    client, token = await _session_client(user)
    response = await client.delete(url.format(mine.pk), headers={"X-CSRFToken": token, **ACCEPT})
    assert response.status_code == 204, response.content
    assert not await Post.objects.filter(pk=mine.pk).aexists()


async def test_authorize_inside_an_async_operation_under_asgi_is_401_for_anonymous(
    other_user: Any,
) -> None:
    post = await Post.objects.acreate(title="theirs", author=other_user)
    response = await AsyncClient().post(f"/t/aauthorize/{post.pk}", headers=ACCEPT)
    problem(response, 401, "not_authenticated")
