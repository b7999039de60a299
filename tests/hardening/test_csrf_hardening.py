"""CSRF behaviours added after review: Django's own @csrf_protect still guards exempt
requests, non-cookie session engines under ASGI, no cookie for API clients."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, Client

from tests.conftest import csrf_cookie, demo_tenant, login_client

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hardening.urls")]


def test_admin_login_post_without_cookie_or_token_is_refused_by_djangos_csrf_protect(
    user: Any,
) -> None:
    # No session cookie: exempt from the suite's check, but the admin's
    # own @csrf_protect still runs, so login CSRF against the admin is refused.
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/admin/login/", {"username": user.email, "password": "correct horse battery staple"}
    )
    assert response.status_code == 403


def test_admin_login_with_its_form_token_still_logs_in(password: str, db: Any) -> None:
    from testproject.blog.models import User

    User.objects.create_superuser("root@example.com", password)
    client = Client(enforce_csrf_checks=True)
    page = client.get("/admin/login/")
    token = page.context["csrf_token"]
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": "root@example.com", "password": password, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"


def test_request_with_authorization_header_gets_no_csrf_cookie() -> None:
    response = Client().get("/posts", headers={"Authorization": "Bearer whatever"})
    assert "csrf_token" not in response.cookies


def test_browser_request_for_a_page_with_a_form_still_gets_the_csrf_cookie(db: Any) -> None:
    assert "csrf_token" in Client().get("/login").cookies


@pytest.mark.django_db(transaction=True)
async def test_database_session_engine_under_asgi_is_not_a_500(settings: Any, user: Any) -> None:
    # Any engine but signed cookies loads the session with I/O: the async middleware
    # must do that in a thread (it raised SynchronousOnlyOperation before).
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    # Only members of the current tenant may write in it.
    await user.tenants.aadd(await sync_to_async(demo_tenant)())
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(user, backend="appframework.auth.AuthManager")
    response = await client.get("/hardening/whoami")
    assert response.status_code == 200
    assert response.json() == {"user": user.email}
    token = await sync_to_async(csrf_cookie)(client)
    refused = await client.post("/posts", "{}", content_type="application/json")
    assert refused.status_code == 403
    created = await client.post(
        "/posts",
        '{"title": "async"}',
        content_type="application/json",
        headers={"X-CSRF-Token": token},
    )
    assert created.status_code == 201


def test_xframe_options_exempt_view_gets_no_x_frame_options() -> None:
    response = Client().get("/hardening/framable")
    assert "X-Frame-Options" not in response
    assert response["X-Content-Type-Options"] == "nosniff"


def test_other_views_still_get_x_frame_options_deny(user: Any) -> None:
    assert login_client(Client(), user).get("/posts")["X-Frame-Options"] == "DENY"
