"""Tenancy on the JSON API: an app session runs in the user's tenant exactly as a
browser session does (the demo's full middleware stack and resolver): the project's
DRF API called with the app's token sees only that tenant's rows, a tenant the user is
not a member of is refused, and the account endpoints answer inside the tenant."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework_tenancy import as_tenant
from testproject.blog.models import Post, Tenant, User
from tests.conftest import demo_tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_stack")]

APP = "/api/auth/app/v1/"
ACME, GLOBEX = 1, 2


@pytest.fixture
def member(password: str) -> Any:
    """A member of Acme only; a post in Acme and one in Globex."""
    user = User.objects.create_user("member@example.com", password)
    user.tenants.add(demo_tenant())
    Tenant.objects.get_or_create(pk=GLOBEX, defaults={"name": "Globex", "slug": "globex"})
    author = User.objects.create_user("author@example.com", "author-password-long")
    for tenant, title in ((ACME, "Acme news"), (GLOBEX, "Globex news")):
        with as_tenant(tenant):
            Post.objects.create(title=title, author=author)
    return user


def _app(user: Any, password: str) -> Client:
    signing_in = Client(HTTP_X_SESSION_TOKEN="")
    answer = signing_in.post(
        APP + "auth/login",
        {"email": user.email, "password": password},
        content_type="application/json",
    )
    assert answer.json()["status"] == "authenticated", answer.content
    return Client(HTTP_X_SESSION_TOKEN=answer["X-Session-Token"])


def test_the_apps_drf_calls_see_only_its_tenants_rows(member: Any, password: str) -> None:
    app = _app(member, password)
    listed = app.get("/api/drf/posts/")
    assert listed.status_code == 200, listed.content
    assert {row["title"] for row in listed.json()["results"]} == {"Acme news"}
    with as_tenant(GLOBEX):
        theirs = Post.objects.get()
    assert app.get(f"/api/drf/posts/{theirs.pk}/").status_code == 404


def test_a_tenant_the_user_is_not_a_member_of_is_403(member: Any, password: str) -> None:
    app = _app(member, password)
    answer = app.get("/api/drf/posts/", HTTP_X_TENANT=str(GLOBEX))
    assert answer.status_code == 403
    assert answer["Content-Type"] == "application/problem+json"


def test_the_account_endpoints_answer_inside_the_tenant(member: Any, password: str) -> None:
    app = _app(member, password)
    account = app.get(APP + "account")
    assert account.status_code == 200
    assert account.json()["user"]["email"] == member.email
    assert app.get(APP + "account/sessions").status_code == 200
