"""The CSRF middleware in an all-async (ASGI) middleware chain, through AsyncClient.

No database here: the session cookie is built directly, and the views never load the user.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import AsyncClient

from appframework.security.csrf import NONCE_SESSION_KEY, REASON_FOREIGN, REASON_NO_TOKEN

from .helpers import COOKIE, URLS

# A signed-in session's first request refreshes its row in the sessions list (the
# session's user is read then), so these sessions need the database too.
pytestmark = [pytest.mark.urls(URLS), pytest.mark.django_db]


def _session_cookie(uid: str, nonce: str) -> str:
    store = SessionStore()
    store[SESSION_KEY] = uid
    store[BACKEND_SESSION_KEY] = "appframework.auth.AuthManager"
    store[HASH_SESSION_KEY] = "not-checked-here"
    store[NONCE_SESSION_KEY] = nonce
    store.save()
    return str(store.session_key)


@pytest.fixture
def aclient() -> AsyncClient:
    client = AsyncClient(enforce_csrf_checks=True)
    client.cookies[settings.SESSION_COOKIE_NAME] = _session_cookie("101", "nonce-a")
    return client


async def _prime(client: AsyncClient) -> str:
    response = await client.get("/sec/async-token-only")
    assert response.status_code == 200
    return str(client.cookies[COOKIE].value)


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
async def test_async_chain_rejects_without_token(aclient: AsyncClient, method: str) -> None:
    await _prime(aclient)
    response = await getattr(aclient, method)(
        "/sec/async-plain",
        b"{}",
        content_type="application/json",
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 403
    assert response.json()["detail"] == REASON_NO_TOKEN


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
async def test_async_chain_accepts_header_token(aclient: AsyncClient, method: str) -> None:
    token = await _prime(aclient)
    response = await getattr(aclient, method)(
        "/sec/async-plain", b"{}", content_type="application/json", headers={"X-CSRF-Token": token}
    )
    assert response.status_code == 200


async def test_async_chain_accepts_form_token(aclient: AsyncClient) -> None:
    token = await _prime(aclient)
    response = await aclient.post("/sec/async-plain", {"_token": token})
    assert response.status_code == 200


async def test_async_chain_sets_a_readable_cookie_when_the_page_uses_the_token() -> None:
    response = await AsyncClient(enforce_csrf_checks=True).get("/sec/async-token-only")
    assert COOKIE in response.cookies
    assert not response.cookies[COOKIE]["httponly"]
    assert response.json()["token"] == response.cookies[COOKIE].value


async def test_async_chain_sets_no_cookie_for_a_page_that_does_not_use_the_token() -> None:
    response = await AsyncClient(enforce_csrf_checks=True).get("/sec/async-plain")
    assert response.status_code == 200
    assert COOKIE not in response.cookies


async def test_async_chain_refuses_token_of_another_session(aclient: AsyncClient) -> None:
    other = AsyncClient(enforce_csrf_checks=True)
    other.cookies[settings.SESSION_COOKIE_NAME] = _session_cookie("202", "nonce-b")
    planted = await _prime(other)
    await _prime(aclient)
    aclient.cookies[COOKIE] = planted
    response = await aclient.post(
        "/sec/async-plain",
        b"{}",
        content_type="application/json",
        headers={"X-CSRF-Token": planted},
    )
    assert response.status_code == 403
    assert response.json()["detail"] == REASON_FOREIGN


async def test_async_chain_same_user_new_login_nonce_refuses_old_token(
    aclient: AsyncClient,
) -> None:
    old = await _prime(aclient)
    aclient.cookies[settings.SESSION_COOKIE_NAME] = _session_cookie("101", "nonce-after-relogin")
    response = await aclient.post(
        "/sec/async-plain", b"{}", content_type="application/json", headers={"X-CSRF-Token": old}
    )
    assert response.status_code == 403


async def test_async_chain_authorization_header_exempt_and_anonymous(aclient: AsyncClient) -> None:
    response = await aclient.post(
        "/sec/async-echo",
        b"{}",
        content_type="application/json",
        headers={"Authorization": "Bearer garbage"},
    )
    assert response.status_code == 200
    assert response.json()["authenticated"] is False


async def test_async_chain_honours_csrf_exempt(aclient: AsyncClient) -> None:
    await _prime(aclient)
    exempt = await aclient.post("/sec/async-exempt", b"{}", content_type="application/json")
    checked = await aclient.post("/sec/async-plain", b"{}", content_type="application/json")
    assert exempt.status_code == 200
    assert checked.status_code == 403


async def test_async_csrf_token_helper(aclient: AsyncClient) -> None:
    token = await _prime(aclient)
    response = await aclient.get("/sec/token-only")
    assert response.json() == {"token": token}


def test_async_middleware_is_a_coroutine_function() -> None:
    from asgiref.sync import iscoroutinefunction
    from django.http import HttpResponse

    from appframework.security import CsrfMiddleware

    async def view(request: Any) -> HttpResponse:
        return HttpResponse()

    assert iscoroutinefunction(CsrfMiddleware(view))
