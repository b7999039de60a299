from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from appframework.authorization import Gate
from appframework.container import container
from tests.conftest import csrf_cookie, demo_tenant, login_client

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def member(user: Any) -> Any:
    """``user``, a member of the tenant the tests run as (Acme): it may write there."""
    user.tenants.add(demo_tenant())
    return user


@pytest.fixture
def browser(member: Any) -> Client:
    """``member`` signed in, CSRF enforced as on a real browser, its token primed."""
    client = login_client(Client(enforce_csrf_checks=True), member)
    csrf_cookie(client)
    return client


def token_of(client: Client) -> str:
    return str(client.cookies["csrf_token"].value)


@pytest.fixture
def dashboard_ability() -> Iterator[list[Any]]:
    """``see-dashboard``, allowed to staff only; yields the calls it received."""
    gate: Gate = container.resolve(Gate)
    calls: list[Any] = []

    def check(user: Any, *args: Any) -> bool:
        calls.append(args)
        return bool(user.is_staff)

    gate.define("see-dashboard", check)
    yield calls
    gate._abilities.pop("see-dashboard", None)
