"""The demo's tenants as a visitor meets them: the landing page points at /tenant and
says what to try; anonymous visitors browse Acme; the demo user (a member of Acme and
Globex) switches on /tenant, and Acme's posts vanish from /posts and GraphQL; a tenant
they are not a member of is a 403; ``seed_demo`` fills both tenants."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client

from appframework_tenancy import all_tenants, as_tenant
from testproject.blog.management.commands.seed_demo import DEMO_EMAIL, DEMO_PASSWORD
from testproject.blog.models import Post, Tenant, User
from tests.demo.browsing import browser_login, form_token

pytestmark = pytest.mark.django_db

ACME, GLOBEX = 1, 2
JSON = {"HTTP_ACCEPT": "application/json"}
PROBLEM = "application/problem+json"


@pytest.fixture
def seeded(db: Any) -> User:
    """``manage.py seed_demo``: the demo user and three posts in each tenant."""
    call_command("seed_demo", stdout=io.StringIO())
    return User.objects.get(email=DEMO_EMAIL)


def switch(client: Client, tenant: Any, **extra: Any) -> Any:
    """Press a "Switch to" button of /tenant (the form's own CSRF token)."""
    page = client.get("/tenant")
    assert page.status_code == 200, page.content[:500]
    return client.post("/tenant", {"tenant": tenant, **form_token(page.content.decode())}, **extra)


def listed(client: Client, **extra: Any) -> set[str]:
    response = client.get("/posts", **JSON, **extra)
    assert response.status_code == 200, response.content[:500]
    return {p["title"] for p in response.json()["posts"]}


def graphql_titles(client: Client) -> set[str]:
    response = client.post(
        "/graphql",
        data=json.dumps({"query": "{ posts { title } }"}),
        content_type="application/json",
        HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value,
    )
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert "errors" not in body, body
    return {p["title"] for p in body["data"]["posts"]}


def titles_of(tenant: int) -> set[str]:
    with as_tenant(tenant):
        return set(Post.objects.values_list("title", flat=True))


# -- the pages -----------------------------------------------------------------------------------------
def test_the_landing_page_links_the_tenant_page_and_says_what_to_look_for(
    demo_stack: None, client: Client
) -> None:
    page = client.get("/").content.decode()
    assert '<a href="/tenant">Tenants</a>' in page
    assert "switch from Acme to Globex" in page
    assert "Acme's posts vanish from" in page
    assert "<code>X-Tenant: 2</code> with its API token gets a 403" in page


def test_the_tenant_page_tells_an_anonymous_visitor_they_browse_acme(
    demo_stack: None, client: Client, seeded: User
) -> None:
    page = client.get("/tenant").content.decode()
    assert "This request runs as tenant <strong>Acme</strong>." in page
    assert "Anonymous visitors browse the public tenant." in page
    assert "<li>Acme post #1</li>" in page
    assert "Globex" not in page.split("<h3>Posts this tenant sees</h3>")[1]


def test_the_tenant_page_counts_posts_with_raw_sql_and_says_whether_the_database_holds_it(
    demo_stack: None, client: Client, seeded: User
) -> None:
    """Raw SQL counts both tenants' six posts. On SQLite the page says row-level
    security is off; on PostgreSQL, where the tests connect as a superuser, that the
    policy is set up but skipped for this role (test_postgres_carry_tenant.py and
    tests/cluster count as an ordinary role: three)."""
    page = client.get("/tenant").content.decode()
    assert "<code>SELECT count(*) FROM blog_post</code>" in page
    assert '<strong id="raw-count">6</strong>' in page
    if connection.vendor == "postgresql":
        assert "this database role is a superuser or has BYPASSRLS" in page
    else:
        assert "Row-level security is off (it needs PostgreSQL)" in page


def test_anonymous_posts_are_only_acmes(demo_stack: None, client: Client, seeded: User) -> None:
    assert listed(client) == titles_of(ACME) == {f"Acme post #{n}" for n in (1, 2, 3)}


def test_anonymous_graphql_posts_are_only_acmes(
    demo_stack: None, client: Client, seeded: User
) -> None:
    response = client.post(
        "/graphql",
        data=json.dumps({"query": "{ posts { title } }"}),
        content_type="application/json",
    )
    assert {p["title"] for p in response.json()["data"]["posts"]} == titles_of(ACME)


def test_the_tenant_page_offers_the_demo_user_a_switch_to_each_of_their_tenants(
    demo_stack: None, seeded: User
) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    page = client.get("/tenant").content.decode()
    assert "This request runs as tenant <strong>Acme</strong>." in page
    assert f'<button name="tenant" value="{ACME}" disabled>Switch to Acme</button>' in page
    assert f'<button name="tenant" value="{GLOBEX}">Switch to Globex</button>' in page


# -- switching -----------------------------------------------------------------------------------------
def test_switching_to_globex_makes_acmes_posts_vanish_from_posts_and_graphql(
    demo_stack: None, seeded: User
) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    assert listed(client) == titles_of(ACME)
    assert graphql_titles(client) == titles_of(ACME)

    response = switch(client, GLOBEX)
    assert response.status_code == 302
    assert response["Location"] == "/tenant"

    page = client.get("/tenant").content.decode()
    assert "This request runs as tenant <strong>Globex</strong>." in page
    assert listed(client) == titles_of(GLOBEX) == {f"Globex post #{n}" for n in (1, 2, 3)}
    assert graphql_titles(client) == titles_of(GLOBEX)


def test_switching_back_to_acme_brings_acmes_posts_back(demo_stack: None, seeded: User) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    switch(client, GLOBEX)
    assert switch(client, ACME).status_code == 302
    assert listed(client) == titles_of(ACME)


def test_a_post_created_after_switching_belongs_to_the_new_tenant(
    demo_stack: None, seeded: User
) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    switch(client, GLOBEX)
    response = client.post(
        "/posts",
        data=json.dumps({"title": "Globex news"}),
        content_type="application/json",
        HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value,
    )
    assert response.status_code == 201, response.content[:500]
    with all_tenants():
        assert Post.objects.get(title="Globex news").tenant_id == GLOBEX
    assert "Globex news" not in titles_of(ACME)


def test_switching_without_the_csrf_token_is_refused(demo_stack: None, seeded: User) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    response = client.post("/tenant", {"tenant": GLOBEX})
    assert response.status_code == 403
    assert listed(client) == titles_of(ACME)


def test_switching_to_a_tenant_the_user_is_not_a_member_of_is_a_403_problem(
    demo_stack: None, seeded: User, user: Any, password: str
) -> None:
    user.tenants.set([ACME])
    client = browser_login(user.email, password)
    response = switch(client, GLOBEX, **JSON)
    assert response.status_code == 403
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == 403
    assert body["code"] == "tenant_not_member"
    assert listed(client) == titles_of(ACME)


def test_switching_to_a_tenant_that_does_not_exist_is_a_403_problem(
    demo_stack: None, seeded: User
) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    response = switch(client, 999, **JSON)
    assert response.status_code == 403
    assert response.json()["code"] == "tenant_not_member"


def test_switching_to_a_tenant_id_that_is_not_a_number_is_a_400(
    demo_stack: None, seeded: User
) -> None:
    client = browser_login(DEMO_EMAIL, DEMO_PASSWORD)
    response = switch(client, "globex", **JSON)
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM


def test_switching_anonymously_is_a_401(demo_stack: None, seeded: User) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/tenant").content.decode()
    assert "Switch to" not in page
    response = client.post(
        "/tenant", {"tenant": GLOBEX, "_token": client.cookies["csrf_token"].value}, **JSON
    )
    assert response.status_code == 401


def signed_in_to_globex_then_removed_from_it(user: Any, password: str) -> Client:
    user.tenants.set([ACME, GLOBEX])
    client = browser_login(user.email, password)
    assert switch(client, GLOBEX).status_code == 302
    user.tenants.set([ACME])
    return client


def test_a_user_removed_from_the_tenant_kept_in_their_session_can_still_sign_out(
    demo_stack: None, seeded: User, user: Any, password: str
) -> None:
    """The tenant kept in the session is re-checked on every request; losing that
    membership must not lock the user out of signing out."""
    client = signed_in_to_globex_then_removed_from_it(user, password)
    old_session = client.cookies[settings.SESSION_COOKIE_NAME].value
    response = client.post("/logout", {"_token": client.cookies["csrf_token"].value})
    assert response.status_code == 302
    assert response["Location"] == "/"
    page = client.get("/").content.decode()
    assert "You are anonymous." in page
    assert user.email not in page
    replayed = Client()
    replayed.cookies[settings.SESSION_COOKIE_NAME] = old_session
    replayed_page = replayed.get("/").content.decode()
    assert "You are anonymous." in replayed_page
    assert user.email not in replayed_page


def test_a_user_removed_from_the_tenant_kept_in_their_session_falls_back_to_a_tenant_of_theirs(
    demo_stack: None, seeded: User, user: Any, password: str
) -> None:
    client = signed_in_to_globex_then_removed_from_it(user, password)
    page = client.get("/tenant")
    assert page.status_code == 200
    assert "This request runs as tenant <strong>Acme</strong>." in page.content.decode()
    assert listed(client) == titles_of(ACME)


# -- seed_demo -------------------------------------------------------------------------------------
def test_seed_demo_creates_posts_in_both_tenants_by_the_moderator_and_the_admin(
    seeded: User,
) -> None:
    assert titles_of(ACME) == {f"Acme post #{n}" for n in (1, 2, 3)}
    assert titles_of(GLOBEX) == {f"Globex post #{n}" for n in (1, 2, 3)}
    with all_tenants():
        authors = set(Post.objects.values_list("author__email", flat=True))
    assert authors == {"moderator@example.com", "admin@example.com"}


def test_seed_demo_makes_the_demo_user_a_member_of_both_tenants(seeded: User) -> None:
    assert set(seeded.tenants.values_list("name", flat=True)) == {"Acme", "Globex"}
    assert set(Tenant.objects.values_list("pk", flat=True)) == {ACME, GLOBEX}


def test_seed_demo_run_twice_adds_nothing(seeded: User) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    with all_tenants():
        assert Post.objects.count() == 6
    assert User.objects.filter(email=DEMO_EMAIL).count() == 1
    assert seeded.tenants.count() == 2
