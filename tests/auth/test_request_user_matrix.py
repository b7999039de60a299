"""Login/logout coherence: after any writer (``login``, ``alogin``, ``logout``,
``alogout``) every reader of the user in the same request (``current_user``,
``current_user_sync``, ``request.user``, ``await request.auser()``) answers the same.

Django's AuthenticationMiddleware caches the async user (``request.auser()``) apart from
``request.user``, and Django's own ``login``/``logout`` reset only the latter, so a reader
that ran before the writer used to keep answering the old user. Each combination runs
through a real request with the test settings' whole middleware stack: a sync view under
WSGI (``Client``) and an async view under ASGI (``AsyncClient``); the readers run before
the writer too (``prime``) so that Django's caches hold the old user.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, Client

from .user_matrix_urls import READERS

pytestmark = pytest.mark.urls("tests.auth.user_matrix_urls")

BACKEND = "appframework.auth.AuthManager"

# (scenario, writer): the user before the request → the user the writer leaves.
#   logout: a logged-in user → anonymous
#   login:  anonymous → the user
#   switch: user A → user B (a login as another user mid-request)
WRITES = [
    pytest.param("logout", "logout", id="logout-user-by-logout"),
    pytest.param("logout", "alogout", id="logout-user-by-alogout"),
    pytest.param("login", "login", id="login-anonymous-by-login"),
    pytest.param("login", "alogin", id="login-anonymous-by-alogin"),
    pytest.param("switch", "login", id="switch-a-to-b-by-login"),
    pytest.param("switch", "alogin", id="switch-a-to-b-by-alogin"),
]
# Which readers run before the writer: none, the reader under test, or all four.
PRIMES = ["none", "same", "all"]


def seen_as(reader: str, pk: Any) -> Any:
    """What ``reader`` should return for the user ``pk`` (None: anonymous).

    ``current_user``/``current_user_sync`` return None for an anonymous request;
    ``request.user``/``request.auser()`` return an AnonymousUser.
    """
    if pk is not None:
        return pk
    return None if reader.startswith("current_user") else "anonymous"


def arrange(scenario: str, user: Any, other_user: Any) -> tuple[Any, Any, Any]:
    """(who is logged in before the request, whom the writer logs in, who is after)."""
    if scenario == "logout":
        return user, None, None
    if scenario == "login":
        return None, user, user
    if scenario == "switch":
        return user, other_user, other_user
    raise ValueError(scenario)


def query(target: Any, prime: str) -> dict[str, Any]:
    data: dict[str, Any] = {"prime": prime}
    if target is not None:
        data["uid"] = target.pk
    return data


def expected_body(reader: str, prime: str, before_pk: Any, after_pk: Any) -> dict[str, Any]:
    primed = READERS if prime == "all" else (reader,) if prime == "same" else ()
    return {
        "before": {name: seen_as(name, before_pk) for name in primed},
        "first": seen_as(reader, after_pk),
        "after": {name: seen_as(name, after_pk) for name in READERS},
    }


def pk_of(user: Any) -> Any:
    return None if user is None else user.pk


@pytest.mark.django_db
@pytest.mark.parametrize("prime", PRIMES)
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("scenario", "writer"), WRITES)
def test_all_readers_agree_with_the_writer_in_a_sync_view_under_wsgi(
    client: Client,
    user: Any,
    other_user: Any,
    scenario: str,
    writer: str,
    reader: str,
    prime: str,
) -> None:
    start, target, end = arrange(scenario, user, other_user)
    if start is not None:
        client.force_login(start, backend=BACKEND)

    response = client.get(f"/m/sync/{writer}/{reader}", query(target, prime))

    assert response.status_code == 200
    assert response.json() == expected_body(reader, prime, pk_of(start), pk_of(end))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("prime", PRIMES)
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("scenario", "writer"), WRITES)
async def test_all_readers_agree_with_the_writer_in_an_async_view_under_asgi(
    user: Any,
    other_user: Any,
    scenario: str,
    writer: str,
    reader: str,
    prime: str,
) -> None:
    start, target, end = arrange(scenario, user, other_user)
    client = AsyncClient()
    if start is not None:
        await client.aforce_login(start, backend=BACKEND)

    response = await client.get(f"/m/async/{writer}/{reader}", query(target, prime))

    assert response.status_code == 200
    assert response.json() == expected_body(reader, prime, pk_of(start), pk_of(end))


# -- the writer's answer also holds for the next request (the cookie it set) ------------------
@pytest.mark.django_db
@pytest.mark.parametrize(("scenario", "writer"), WRITES)
def test_next_request_after_a_sync_view_writer_sees_the_same_user(
    client: Client, user: Any, other_user: Any, scenario: str, writer: str
) -> None:
    start, target, end = arrange(scenario, user, other_user)
    if start is not None:
        client.force_login(start, backend=BACKEND)
    client.get(f"/m/sync/{writer}/current_user", query(target, "all"))

    follow = client.get("/t/whoami")
    assert follow.status_code == 200
    assert follow.json()["current_user"] == pk_of(end)
    assert follow.json()["request_user"] == pk_of(end)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("scenario", "writer"), WRITES)
async def test_next_request_after_an_async_view_writer_sees_the_same_user(
    user: Any, other_user: Any, scenario: str, writer: str
) -> None:
    start, target, end = arrange(scenario, user, other_user)
    client = AsyncClient()
    if start is not None:
        await client.aforce_login(start, backend=BACKEND)
    await client.get(f"/m/async/{writer}/current_user", query(target, "all"))

    follow = await client.get("/t/awhoami")
    assert follow.status_code == 200
    assert follow.json()["current_user"] == pk_of(end)
    assert follow.json()["request_user"] == pk_of(end)
