"""The demo as a tour: the landing page lists the seeded accounts and reaches every part;
/blog shows the Gate allowing and refusing; /account/token and the GraphQL ``createPost``
mutation work as the landing page says."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

from appframework_tenancy import all_tenants, as_tenant
from testproject.blog.management.commands.seed_demo import DEMO_USERS, SEEDED_EMAILS
from testproject.blog.models import Post, Tenant, User
from tests.demo.browsing import browser_login, form_token

# The demo's own middleware: its tenant resolver decides what each request sees.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_stack")]

ACME, GLOBEX = 1, 2
PASSWORDS = {u.email: u.password for u in DEMO_USERS}


@pytest.fixture
def seeded(db: Any) -> None:
    call_command("seed_demo", stdout=io.StringIO())


def login_as(email: str) -> Client:
    return browser_login(email, PASSWORDS[email])


def someone_elses_post(email: str, tenant: int = ACME) -> Post:
    with as_tenant(tenant):
        post = Post.objects.exclude(author__email=email).first()
    assert post is not None
    return post


def exists(pk: int) -> bool:
    with all_tenants():
        return Post.objects.filter(pk=pk).exists()


def hrefs(html: str) -> list[str]:
    """Where the page's links (``<a href>``) go; a stylesheet's ``<link href>`` is not a
    page to walk to (and DEBUG off, as here, serves no static file)."""
    return re.findall(r'<a\b[^>]*\bhref="([^"]+)"', html)


# -- seed_demo ------------------------------------------------------------------------------------------
def test_seed_demo_creates_one_account_per_role_with_its_tenants(seeded: None) -> None:
    assert {u.role for u in DEMO_USERS} == {"reader", "editor", "moderator", "admin"}
    for demo in DEMO_USERS:
        user = User.objects.get(email=demo.email)
        assert user.check_password(demo.password)
        assert user.role_names() == frozenset({demo.role})
        assert set(user.tenants.values_list("slug", flat=True)) == set(demo.tenants)
        assert user.is_superuser is demo.superuser
        assert user.is_staff is demo.superuser


def test_seed_demo_run_twice_keeps_one_account_each(seeded: None) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    assert User.objects.filter(email__in=SEEDED_EMAILS).count() == len(DEMO_USERS)


def test_seed_demo_prints_every_account_with_its_password(db: Any) -> None:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    for demo in DEMO_USERS:
        assert f"{demo.email} / {demo.password}" in out.getvalue()


# -- the landing page ------------------------------------------------------------------------------------
def test_landing_page_lists_every_seeded_account_with_password_and_role(
    seeded: None, client: Client
) -> None:
    page = client.get("/").content.decode()
    for demo in DEMO_USERS:
        row = re.search(rf"<tr><td><code>{re.escape(demo.email)}</code></td>.*?</tr>", page)
        assert row, demo.email
        assert f"<code>{demo.password}</code>" in row.group(0)
        assert f"<td>{demo.role}</td>" in row.group(0)


@pytest.mark.parametrize(
    "path",
    ["/signup", "/login", "/account/mfa", "/account/passkeys", "/account/sessions", "/account/tokens", "/spa/", "/account/token", "/blog", "/tenant", "/graphql",
     "/webhooks", "/admin/", "/no-such-page", "/api/drf/posts/", "/api/ninja/docs"],
)
def test_landing_page_links_each_part_of_the_tour(seeded: None, client: Client, path: str) -> None:
    assert path in hrefs(client.get("/").content.decode())


def test_every_link_on_the_landing_page_answers_for_the_admin(seeded: None) -> None:
    """A new user's walk: signed in as the admin, every page the landing page links
    opens (the missing page is the one that must not). GraphiQL is on, as under
    ``scripts/demo`` (DEBUG=1)."""
    graphql_settings = {**settings.APPFRAMEWORK["GRAPHQL"], "GRAPHIQL": True}
    with override_settings(APPFRAMEWORK={**settings.APPFRAMEWORK, "GRAPHQL": graphql_settings}):
        walk_the_landing_page(login_as("admin@example.com"))


@override_settings(DEMO_MAILBOX_PAGE=True)  # as scripts/demo runs it (DEBUG on)
def walk_the_landing_page(client: Client) -> None:
    links = {h for h in hrefs(client.get("/").content.decode()) if h.startswith("/")}
    assert len(links) >= 12
    for link in sorted(links):
        response = client.get(link, HTTP_ACCEPT="text/html")
        expected = 404 if link == "/no-such-page" else 200
        assert response.status_code == expected, (link, response.status_code)


def test_every_tour_item_says_what_to_look_for(seeded: None, client: Client) -> None:
    page = client.get("/").content.decode()
    tour = re.search(r'<ol id="tour">(.*?)</ol>', page, re.S)
    assert tour
    items = re.findall(r"<li>(.*?)</li>", tour.group(1), re.S)
    assert len(items) >= 12
    for item in items:
        assert "Look for" in item or "look for" in item, item[:120]


# -- /blog and the Gate ---------------------------------------------------------------------------------
def test_blog_lists_only_the_current_tenants_posts(seeded: None, client: Client) -> None:
    page = client.get("/blog").content.decode()
    assert "Posts in Acme" in page
    assert "Acme post #1" in page
    assert "Globex post #1" not in page


def test_blog_shows_the_create_form_only_when_signed_in(seeded: None, client: Client) -> None:
    assert 'id="new-post"' not in client.get("/blog").content.decode()
    assert 'id="new-post"' in login_as("reader@example.com").get("/blog").content.decode()


def test_blog_form_creates_a_post_in_the_current_tenant(seeded: None) -> None:
    client = login_as("editor@example.com")
    page = client.get("/blog").content.decode()
    response = client.post("/blog", {"title": "From the form", "body": "hi", **form_token(page)})
    assert response.status_code == 302 and response["Location"] == "/blog"
    listing = client.get("/blog").content.decode()
    assert "From the form" in listing and "Created" in listing
    with as_tenant(ACME):
        post = Post.objects.get(title="From the form")
    assert post.author.email == "editor@example.com"


def test_blog_form_without_its_csrf_token_is_a_403_and_writes_nothing(seeded: None) -> None:
    client = login_as("editor@example.com")
    response = client.post("/blog", {"title": "Forged"}, HTTP_ACCEPT="text/html")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    with all_tenants():
        assert not Post.objects.filter(title="Forged").exists()


def test_blog_form_from_another_origin_is_a_403(seeded: None) -> None:
    client = login_as("editor@example.com")
    page = client.get("/blog").content.decode()
    response = client.post(
        "/blog", {"title": "Cross-site", **form_token(page)}, HTTP_ORIGIN="https://evil.test"
    )
    assert response.status_code == 403
    with all_tenants():
        assert not Post.objects.filter(title="Cross-site").exists()


@pytest.mark.parametrize("title", ["", "   ", "x" * 201])
def test_blog_form_with_a_bad_title_is_a_422_and_writes_nothing(seeded: None, title: str) -> None:
    client = login_as("editor@example.com")
    page = client.get("/blog").content.decode()
    with all_tenants():
        before = Post.objects.count()
    response = client.post("/blog", {"title": title, **form_token(page)}, HTTP_ACCEPT="text/html")
    assert response.status_code == 422
    with all_tenants():
        assert Post.objects.count() == before


def test_blog_form_posted_anonymously_is_a_401(seeded: None) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/blog").content.decode()
    response = client.post("/blog", {"title": "Anon", **form_token(page)})
    assert response.status_code == 401


def test_reader_pressing_delete_on_someone_elses_post_gets_the_403_page(seeded: None) -> None:
    client = login_as("reader@example.com")
    post = someone_elses_post("reader@example.com")
    page = client.get("/blog").content.decode()
    assert "the Gate will refuse: 403" in page
    response = client.post(f"/posts/{post.pk}/delete", form_token(page), HTTP_ACCEPT="text/html")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert exists(post.pk)


def test_editor_pressing_delete_on_the_same_post_deletes_it(seeded: None) -> None:
    client = login_as("editor@example.com")
    post = someone_elses_post("editor@example.com")
    page = client.get("/blog").content.decode()
    assert "the Gate allows you to delete it" in page
    response = client.post(f"/posts/{post.pk}/delete", form_token(page))
    assert response.status_code == 302 and response["Location"] == "/blog"
    assert not exists(post.pk)
    assert "the Gate allowed it" in client.get("/blog").content.decode()


def test_reader_deletes_its_own_post(seeded: None) -> None:
    client = login_as("reader@example.com")
    page = client.get("/blog").content.decode()
    client.post("/blog", {"title": "Mine", **form_token(page)})
    with as_tenant(ACME):
        mine = Post.objects.get(title="Mine")
    response = client.post(f"/posts/{mine.pk}/delete", form_token(page))
    assert response.status_code == 302
    assert not exists(mine.pk)


def test_delete_button_anonymously_is_a_401_and_deletes_nothing(seeded: None) -> None:
    client = Client(enforce_csrf_checks=True)
    post = someone_elses_post("nobody@example.com")
    page = client.get("/blog").content.decode()
    response = client.post(f"/posts/{post.pk}/delete", form_token(page))
    assert response.status_code == 401
    assert exists(post.pk)


def test_delete_of_another_tenants_post_is_a_404_even_for_the_editor(seeded: None) -> None:
    client = login_as("editor@example.com")
    globex_post = someone_elses_post("editor@example.com", tenant=GLOBEX)
    page = client.get("/blog").content.decode()  # the editor works in Acme
    response = client.post(f"/posts/{globex_post.pk}/delete", form_token(page))
    assert response.status_code == 404
    assert exists(globex_post.pk)


@pytest.mark.parametrize(
    ("email", "status"),
    [("moderator@example.com", 200), ("reader@example.com", 403), ("editor@example.com", 403)],
)
def test_publish_is_the_moderators_ability(seeded: None, email: str, status: int) -> None:
    client = login_as(email)
    post = someone_elses_post(email)
    page = client.get("/blog").content.decode()
    response = client.post(f"/posts/{post.pk}/publish", form_token(page))
    assert response.status_code == status


# -- /account/token ---------------------------------------------------------------------------------------
def test_token_page_needs_a_session(seeded: None, client: Client) -> None:
    response = client.get("/account/token", HTTP_ACCEPT="application/json")
    assert response.status_code == 401


def test_token_page_issues_a_token_that_calls_api_me_without_a_cookie(seeded: None) -> None:
    client = login_as("reader@example.com")
    page = client.get("/account/token").content.decode()
    assert 'id="issue"' in page and 'credentials: "omit"' in page
    issued = client.post("/token", HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value)
    assert issued.status_code == 200
    token = issued.json()["token"]
    me = Client().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert me.status_code == 200 and me.json()["email"] == "reader@example.com"
    anonymous = Client().get("/api/me", HTTP_ACCEPT="application/json")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")


def test_reader_with_its_token_asking_for_globex_is_a_403(seeded: None) -> None:
    client = login_as("reader@example.com")
    token = client.post("/token", HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value).json()[
        "token"
    ]
    response = Client().get(
        "/posts", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_X_TENANT="2",
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 403
    assert response.json()["code"] == "tenant_not_member"


# -- GraphQL createPost --------------------------------------------------------------------------------
def graphql(client: Client, query: str) -> dict[str, Any]:
    token = client.cookies["csrf_token"].value if "csrf_token" in client.cookies else ""
    response = client.post(
        "/graphql", json.dumps({"query": query}), content_type="application/json",
        HTTP_X_CSRF_TOKEN=token,
    )
    assert response.status_code == 200, response.content[:300]
    body: dict[str, Any] = response.json()
    return body


def test_create_post_mutation_writes_in_the_current_tenant_as_the_viewer(seeded: None) -> None:
    client = login_as("editor@example.com")
    page = client.get("/tenant").content.decode()
    client.post("/tenant", {"tenant": GLOBEX, **form_token(page)})
    body = graphql(client, 'mutation { createPost(title: "Via GraphQL") { title author { email } } }')
    assert body == {
        "data": {"createPost": {"title": "Via GraphQL", "author": {"email": "editor@example.com"}}}
    }
    with all_tenants():
        post = Post.objects.get(title="Via GraphQL")
    assert post.tenant_id == Tenant.objects.get(slug="globex").pk


def test_create_post_mutation_anonymously_is_an_error_with_status_401(seeded: None) -> None:
    body = graphql(Client(), 'mutation { createPost(title: "Anon") { id } }')
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["status"] == 401
    with all_tenants():
        assert not Post.objects.filter(title="Anon").exists()


def test_create_post_mutation_with_an_empty_title_is_a_422_error(seeded: None) -> None:
    body = graphql(login_as("reader@example.com"), 'mutation { createPost(title: " ") { id } }')
    assert body["errors"][0]["extensions"]["status"] == 422


# -- login `next` -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("next_url", "expected"),
    [("/blog", "/blog"), ("https://evil.test/", "/"), ("//evil.test/", "/"), ("", "/")],
)
def test_login_follows_only_a_same_site_next(seeded: None, next_url: str, expected: str) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get(f"/login?next={next_url}").content.decode()
    response = client.post(
        "/login",
        {"email": "reader@example.com", "password": "reader-password", "next": next_url,
         **form_token(page)},
    )
    assert response.status_code == 302
    assert response["Location"] == expected
