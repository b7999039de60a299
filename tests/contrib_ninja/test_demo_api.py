"""The demo's django-ninja API (/api/ninja/, testproject/blog/api_ninja.py) on the
demo's URLconf and its full middleware stack (TenantMiddleware and its resolver): a
signed-in editor sees and writes only in the tenant the request runs as, a browser's
write needs its CSRF token, and the OpenAPI page and schema are served."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from appframework_tenancy import as_tenant
from testproject.blog.models import Post, Tenant
from tests.conftest import csrf_cookie, demo_tenant, login_client

from .conftest import JSON, bearer, make_editor, problem

pytestmark = pytest.mark.django_db

ACME, GLOBEX = 1, 2


@pytest.fixture
def editor(demo_stack: None) -> Any:
    """An editor, a member of Acme and Globex, with posts by someone else in each."""
    from testproject.blog.models import User

    editor = make_editor()
    globex = Tenant.objects.get_or_create(pk=GLOBEX, defaults={"name": "Globex", "slug": "globex"})
    editor.tenants.add(demo_tenant(), globex[0])
    author = User.objects.create_user("author@example.com", "author-password-long")
    for tenant, name in ((ACME, "Acme"), (GLOBEX, "Globex")):
        with as_tenant(tenant):
            Post.objects.create(title=f"{name} news", author=author)
    return editor


def _browser(user: Any) -> tuple[Client, str]:
    """A browser signed in as ``user``, CSRF enforced, and the token its session got
    (from the cookie a page with a form sets)."""
    client = login_client(Client(enforce_csrf_checks=True), user)
    return client, csrf_cookie(client)


def _titles(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["title"] for row in response.json()}


def test_a_signed_in_editor_lists_only_the_current_tenants_posts(editor: Any) -> None:
    client, _ = _browser(editor)
    listed = client.get("/api/ninja/posts", **JSON)
    assert _titles(listed) == {"Acme news"}  # their first tenant
    assert {row["tenant_id"] for row in listed.json()} == {ACME}
    assert _titles(client.get("/api/ninja/posts", HTTP_X_TENANT=str(GLOBEX), **JSON)) == {
        "Globex news"
    }


def test_creating_a_post_with_the_csrf_header_is_201_and_stamped_with_the_tenant(
    editor: Any,
) -> None:
    client, token = _browser(editor)
    response = client.post(
        "/api/ninja/posts",
        json.dumps({"title": "Fresh", "body": "text"}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
        HTTP_X_TENANT=str(GLOBEX),
        **JSON,
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["title"] == "Fresh" and created["author_id"] == editor.pk
    assert created["tenant_id"] == GLOBEX
    with as_tenant(GLOBEX):
        assert Post.objects.get(pk=created["id"]).tenant_id == GLOBEX
    with as_tenant(ACME):
        assert not Post.objects.filter(pk=created["id"]).exists()


def test_creating_a_post_without_the_csrf_header_is_refused(editor: Any) -> None:
    client, _ = _browser(editor)
    response = client.post(
        "/api/ninja/posts", json.dumps({"title": "Forged"}), content_type="application/json"
    )
    assert response.status_code == 403
    with as_tenant(ACME):
        assert not Post.objects.filter(title="Forged").exists()


def test_the_demos_async_delete_lets_an_editor_delete_and_hides_other_tenants_posts(
    editor: Any,
) -> None:
    with as_tenant(ACME):
        acme = Post.objects.get(title="Acme news")
    with as_tenant(GLOBEX):
        globex = Post.objects.get(title="Globex news")
    # Runs as Acme: Globex's post is not there to delete.
    problem(Client().delete(f"/api/ninja/posts/{globex.pk}", **bearer(editor)), 404, "not_found")
    response = Client().delete(f"/api/ninja/posts/{acme.pk}", **bearer(editor))
    assert response.status_code == 204, response.content
    with as_tenant(ACME):
        assert not Post.objects.filter(pk=acme.pk).exists()
    with as_tenant(GLOBEX):
        assert Post.objects.filter(pk=globex.pk).exists()


def test_the_openapi_docs_page_is_html(demo_stack: None) -> None:
    response = Client().get("/api/ninja/docs")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b"/api/ninja/openapi.json" in response.content


def test_the_openapi_schema_lists_the_posts_path_and_both_security_schemes(
    demo_stack: None,
) -> None:
    response = Client().get("/api/ninja/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    assert {"/api/ninja/posts", "/api/ninja/posts/{id}"} <= set(schema["paths"])
    schemes = schema["components"]["securitySchemes"]
    assert schemes["BearerAuth"] == {"type": "http", "scheme": "bearer"}
    assert schemes["SessionAuth"] == {"type": "apiKey", "in": "cookie", "name": "sessionid"}
    assert schema["paths"]["/api/ninja/posts"]["get"]["security"] == [
        {"BearerAuth": []},
        {"SessionAuth": []},
    ]
