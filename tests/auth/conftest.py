"""Helpers and fixtures shared by the auth tests (new file; the suite conftest is untouched)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client


def session_cookie_name() -> str:
    return str(settings.SESSION_COOKIE_NAME)


def cookie_for(user: Any) -> str:
    """A real signed session cookie value for ``user`` (login() through the test client)."""
    client = Client()
    client.force_login(user, backend="appframework.auth.AuthManager")
    return client.cookies[session_cookie_name()].value


def client_with_session(value: str, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.cookies[session_cookie_name()] = value
    return client


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture(autouse=True)
def _close_worker_thread_connections(request: pytest.FixtureRequest) -> Iterator[None]:
    """Async tests reach the database from asgiref's sync_to_async worker thread, whose
    connection AsyncClient never closes; close it so PostgreSQL can drop the test DB."""
    yield
    if inspect.iscoroutinefunction(getattr(request, "function", None)):
        from asgiref.sync import SyncToAsync
        from django.db import connections

        SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.fixture
def session_cookie(user: Any) -> str:
    return cookie_for(user)


@pytest.fixture
def token(user: Any) -> str:
    from appframework.auth import TokenManager

    return TokenManager().issue(user)


async def asgi_request(
    app: Any,
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]] | None = None,
    body: bytes = b"",
) -> tuple[int, dict[bytes, list[bytes]], bytes]:
    """Drive an ASGI application with one HTTP request, the way a server would."""
    path_only, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path_only,
        "raw_path": path_only.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver"), *(headers or [])],
        "client": ("127.0.0.1", 12345),
        "server": ("testserver", 80),
    }
    done = asyncio.Event()
    sent_body = False
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await asyncio.wait_for(app(scope, receive, send), timeout=20)
    start = next(m for m in messages if m["type"] == "http.response.start")
    response_headers: dict[bytes, list[bytes]] = {}
    for name, value in start.get("headers", []):
        response_headers.setdefault(name.lower(), []).append(value)
    content = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return start["status"], response_headers, content
