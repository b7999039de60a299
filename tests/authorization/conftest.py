"""Fixtures shared by the authorization tests (the suite's conftest is left untouched)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import AsyncRequestFactory, RequestFactory

from appframework.authorization import Gate, gate_evaluated
from appframework.container import container


class Thing:
    """A plain model-like class for Gate tests that need no database."""

    def __init__(self, owner_id: int | None = None) -> None:
        self.owner_id = owner_id


class SpecialThing(Thing):
    """A subclass: finds the policy registered for Thing."""


class Person:
    """A plain user-like object."""

    def __init__(self, pk: int = 1, *, is_active: bool = True, roles: tuple[str, ...] = ()) -> None:
        self.pk = self.id = pk
        self.is_active = is_active
        self.is_authenticated = True
        self.roles = set(roles)

    def has_role(self, name: str) -> bool:
        return name in self.roles

    def __repr__(self) -> str:
        return f"Person({self.pk})"


@pytest.fixture(autouse=True)
def _close_worker_thread_connections(request: pytest.FixtureRequest) -> Iterator[None]:
    """Async tests reach the database from asgiref's worker thread; close its connections
    afterwards so PostgreSQL can drop the test database at the end of the session."""
    yield
    if inspect.iscoroutinefunction(getattr(request, "function", None)):
        from asgiref.sync import SyncToAsync
        from django.db import connections

        SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.fixture
def gate() -> Gate:
    """A fresh Gate: the container's shared one is never touched by rule tests."""
    return Gate()


@pytest.fixture
def bound_gate() -> Iterator[Gate]:
    """A fresh Gate bound in the container for one test (authorize/has_perm read it
    there); the shared one is put back afterwards."""
    shared = container.resolve(Gate)
    fresh = Gate()
    container.bind(Gate, fresh)
    try:
        yield fresh
    finally:
        container.bind(Gate, shared)


@contextmanager
def recording_evaluations(gate: Gate) -> Iterator[list[dict[str, Any]]]:
    """Collect the keyword arguments of every gate_evaluated sent by ``gate``."""
    seen: list[dict[str, Any]] = []

    def receiver(sender: Any, signal: Any = None, **kwargs: Any) -> None:
        if sender is gate:
            seen.append(kwargs)

    gate_evaluated.connect(receiver, weak=False)
    try:
        yield seen
    finally:
        gate_evaluated.disconnect(receiver)


@pytest.fixture
def person() -> Person:
    return Person(1)


@pytest.fixture
def editor_role(db: Any) -> Any:
    from appframework.authorization import Role

    return Role.objects.create(name="editor")


@pytest.fixture
def editor(db: Any, password: str, editor_role: Any) -> Any:
    from testproject.blog.models import User

    user = User.objects.create_user("carol@example.com", password, name="Carol")
    user.roles.add(editor_role)
    return User.objects.get(pk=user.pk)


@pytest.fixture
def superuser(db: Any, password: str) -> Any:
    from testproject.blog.models import User

    return User.objects.create_superuser("root@example.com", password, name="Root")


@pytest.fixture
def post(user: Any) -> Any:
    from testproject.blog.models import Post

    return Post.objects.create(title="Alice's post", author=user)


@pytest.fixture
def other_post(other_user: Any) -> Any:
    from testproject.blog.models import Post

    return Post.objects.create(title="Bob's post", author=other_user)


def sync_request(user: Any = None, **headers: str) -> Any:
    """A GET request carrying ``user`` as AuthenticationMiddleware would set it."""
    request = RequestFactory().get("/", **headers)
    request.user = user if user is not None else AnonymousUser()
    return request


def async_request(user: Any = None, **headers: str) -> Any:
    # AsyncRequestFactory puts extra kwargs into the ASGI scope; real headers go in headers=.
    named = {
        key[5:].replace("_", "-").title(): value
        for key, value in headers.items()
        if key.startswith("HTTP_")
    }
    request = AsyncRequestFactory().get("/", headers=named)
    resolved = user if user is not None else AnonymousUser()
    request.user = resolved

    async def auser() -> Any:
        return resolved

    request.auser = auser
    return request


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}
