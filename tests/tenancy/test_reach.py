"""Every way into the demo's posts runs under one tenant: the GraphQL endpoint (session
and bearer token), ``execute_graphql``/``aexecute_graphql`` called from code, the Gate's
queryset scope and the JSON API with a bearer token (``X-Tenant`` picks one of the
token user's tenants; any other is a 403)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from graphql import GraphQLSchema, build_schema

from appframework.auth import TokenManager
from appframework.authorization import Gate
from appframework.container import container
from appframework_graphql import aexecute_graphql, execute_graphql
from appframework_tenancy import all_tenants, as_tenant
from testproject.blog.models import Post
from testproject.blog.schema import schema as demo_schema
from tests.conftest import login_client

pytestmark = pytest.mark.django_db

A, B = 1, 2
TITLES = "{ posts { title } }"
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def posts(user: Any, other_user: Any) -> dict[str, Post]:
    """Two posts in tenant A (one by ``user``, one by ``other_user``), one by ``user`` in B."""
    with as_tenant(A):
        a_mine = Post.objects.create(title="A-mine", author=user)
        a_theirs = Post.objects.create(title="A-theirs", author=other_user)
    with as_tenant(B):
        b_mine = Post.objects.create(title="B-mine", author=user)
    return {"a_mine": a_mine, "a_theirs": a_theirs, "b_mine": b_mine}


def member_of(user: Any, *tenants: int) -> Any:
    user.tenants.set(tenants)
    return user


def gql(client: Client, query: str = TITLES, **headers: Any) -> dict[str, Any]:
    response = client.post(
        "/graphql", data=json.dumps({"query": query}), content_type="application/json", **headers
    )
    assert response.status_code == 200, response.content[:300]
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    return body


def titles(body: dict[str, Any]) -> set[str]:
    return {p["title"] for p in body["data"]["posts"]}


def session_login(client: Client, user: Any) -> str:
    """Sign ``user`` in; the CSRF cookie's value (the X-CSRF-Token a session needs)."""
    login_client(client, user)
    assert client.get("/").status_code == 200
    return client.cookies["csrf_token"].value


# -- the GraphQL endpoint ---------------------------------------------------------------------------
def test_graphql_posts_of_a_session_user_are_those_of_their_first_tenant(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, A, B)
    csrf = session_login(client, user)
    assert titles(gql(client, HTTP_X_CSRF_TOKEN=csrf)) == {"A-mine", "A-theirs"}


def test_graphql_posts_of_a_session_user_follow_the_x_tenant_header(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, A, B)
    csrf = session_login(client, user)
    assert titles(gql(client, HTTP_X_CSRF_TOKEN=csrf, HTTP_X_TENANT=str(B))) == {"B-mine"}


def test_graphql_posts_of_a_bearer_token_user_are_those_of_the_token_users_tenant(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, B)
    token = TokenManager().issue(user)
    assert titles(gql(client, HTTP_AUTHORIZATION=f"Bearer {token}")) == {"B-mine"}


def test_graphql_single_post_of_another_tenant_is_null(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, B)
    token = TokenManager().issue(user)
    query = f'{{ post(id: "{posts["a_mine"].pk}") {{ title }} }}'
    body = gql(client, query, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert body["data"]["post"] is None
    own_query = f'{{ post(id: "{posts["b_mine"].pk}") {{ title }} }}'
    own = gql(client, own_query, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert own["data"]["post"] == {"title": "B-mine"}


def test_graphql_delete_of_another_tenants_post_finds_no_post_and_deletes_nothing(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, B)
    token = TokenManager().issue(user)
    target = posts["a_mine"]  # the user's own post, but in a tenant they are not in
    response = client.post(
        "/graphql",
        data=json.dumps({"query": f'mutation {{ deletePost(id: "{target.pk}") }}'}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    body = response.json()
    assert body["errors"][0]["message"] == f"No post with id {target.pk}."
    assert Post.unscoped.filter(pk=target.pk).exists()


# -- execute_graphql from code ------------------------------------------------------------------------
def test_execute_graphql_inside_a_tenant_returns_only_that_tenants_posts(
    posts: dict[str, Post],
) -> None:
    with as_tenant(B):
        body = execute_graphql(None, query=TITLES, schema=demo_schema)
    assert body == {"data": {"posts": [{"title": "B-mine"}]}}


def test_execute_graphql_with_the_configured_schema_follows_the_tenant_too(
    posts: dict[str, Post],
) -> None:
    with as_tenant(A):
        body = execute_graphql(query=TITLES)
    assert titles(body) == {"A-mine", "A-theirs"}


def test_execute_graphql_under_all_tenants_returns_every_tenants_posts(
    posts: dict[str, Post],
) -> None:
    with all_tenants():
        body = execute_graphql(query=TITLES, schema=demo_schema)
    assert titles(body) == {"A-mine", "A-theirs", "B-mine"}


def async_posts_schema() -> GraphQLSchema:
    """``posts`` with an async resolver (the async ORM): what ``aexecute_graphql`` is for."""
    schema = build_schema("type Query { posts: [Post!]! } type Post { title: String! }")

    async def resolve_posts(_: Any, info: Any) -> list[Post]:
        return [p async for p in Post.objects.order_by("title")]

    schema.query_type.fields["posts"].resolve = resolve_posts  # type: ignore[union-attr]
    return schema


@pytest.mark.django_db(transaction=True)
async def test_aexecute_graphql_inside_a_tenant_returns_only_that_tenants_posts() -> None:
    from asgiref.sync import sync_to_async

    from testproject.blog.models import User

    def make() -> None:
        author = User.objects.create_user("async-author@example.com", "x")
        for tenant, title in ((A, "A-async"), (B, "B-async")):
            with as_tenant(tenant):
                Post.objects.create(title=title, author=author)

    await sync_to_async(make)()
    schema = async_posts_schema()
    with as_tenant(B):
        body = await aexecute_graphql(None, query=TITLES, schema=schema)
    assert body == {"data": {"posts": [{"title": "B-async"}]}}
    with as_tenant(A):
        body = await aexecute_graphql(None, query=TITLES, schema=schema)
    assert body == {"data": {"posts": [{"title": "A-async"}]}}
    await sync_to_async(connections.close_all)()  # the ORM's worker thread's connection


def test_execute_graphql_runs_async_resolvers_under_the_callers_tenant(
    posts: dict[str, Post],
) -> None:
    with as_tenant(B):
        body = execute_graphql(None, query=TITLES, schema=async_posts_schema())
    assert body == {"data": {"posts": [{"title": "B-mine"}]}}


# -- the Gate's queryset scope -------------------------------------------------------------------------
def test_gate_scope_of_an_author_is_their_posts_of_the_current_tenant_only(
    user: Any, posts: dict[str, Post]
) -> None:
    gate: Gate = container.resolve(Gate)
    with as_tenant(A):
        scoped = gate.scope(user, "delete-post", Post.objects.all())
        assert [p.title for p in scoped] == ["A-mine"]
    with as_tenant(B):
        # Built under A, evaluated afresh under B: B's posts.
        assert [p.title for p in scoped.all()] == ["B-mine"]


def test_gate_scope_of_an_editor_is_every_post_of_the_current_tenant_only(
    other_user: Any, posts: dict[str, Post]
) -> None:
    other_user.assign_role("editor")
    gate: Gate = container.resolve(Gate)
    with as_tenant(A):
        scoped = gate.scope(other_user, "delete-post", Post.objects.all())
        assert {p.title for p in scoped} == {"A-mine", "A-theirs"}
    with as_tenant(B):
        scoped = gate.scope(other_user, "delete-post", Post.objects.all())
        assert {p.title for p in scoped} == {"B-mine"}


# -- the JSON API with a bearer token ---------------------------------------------------------------
def bearer(user: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}


def listed(response: Any) -> set[str]:
    assert response.status_code == 200, response.content[:300]
    return {p["title"] for p in response.json()["posts"]}


def test_bearer_posts_list_runs_under_the_token_users_tenant(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, B)
    assert listed(client.get("/posts", **bearer(user))) == {"B-mine"}


def test_bearer_x_tenant_switches_between_the_token_users_tenants(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, A, B)
    headers = bearer(user)
    assert listed(client.get("/posts", **headers)) == {"A-mine", "A-theirs"}
    assert listed(client.get("/posts", HTTP_X_TENANT=str(B), **headers)) == {"B-mine"}
    assert listed(client.get("/posts", HTTP_X_TENANT=str(A), **headers)) == {
        "A-mine",
        "A-theirs",
    }


@pytest.mark.parametrize("accept", [JSON, {}], ids=["json", "no-accept"])
@pytest.mark.parametrize(
    ("members", "header", "control", "expected"),
    [
        pytest.param((A,), str(B), str(A), {"A-mine", "A-theirs"}, id="not-a-member"),
        pytest.param((A,), "2 OR 1=1", str(A), {"A-mine", "A-theirs"}, id="not-an-id"),
        pytest.param((A, B), "2 OR 1=1", str(B), {"B-mine"}, id="not-an-id-of-a-member"),
    ],
)
def test_bearer_x_tenant_the_user_is_not_a_member_of_is_403(
    demo_stack: None,
    client: Client,
    user: Any,
    posts: dict[str, Post],
    accept: dict[str, str],
    members: tuple[int, ...],
    header: str,
    control: str,
    expected: set[str],
) -> None:
    """Refused, never a quiet switch or a filter built from the header: not even a member
    of tenant 2 gets in with ``2 OR 1=1``. The same token with a tenant of theirs lists
    that tenant's posts."""
    member_of(user, *members)
    token = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}"}
    response = client.get("/posts", HTTP_X_TENANT=header, **token, **accept)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "tenant_not_member"
    body = response.content.decode()
    for title in ("A-mine", "A-theirs", "B-mine"):
        assert title not in body
    assert listed(client.get("/posts", HTTP_X_TENANT=control, **token, **accept)) == expected


def test_bearer_post_creates_the_post_in_the_token_users_selected_tenant(
    demo_stack: None, client: Client, user: Any
) -> None:
    member_of(user, A, B)
    response = client.post(
        "/posts",
        data=json.dumps({"title": "made with a token"}),
        content_type="application/json",
        HTTP_X_TENANT=str(B),
        **bearer(user),
    )
    assert response.status_code == 201, response.content[:300]
    assert response.json()["tenant_id"] == B
    assert Post.unscoped.get(title="made with a token").tenant_id == B


def test_bearer_post_detail_of_another_tenants_post_is_404(
    demo_stack: None, client: Client, user: Any, posts: dict[str, Post]
) -> None:
    member_of(user, B)
    response = client.get(f"/posts/{posts['a_mine'].pk}", **bearer(user))
    assert response.status_code == 404
    assert "A-mine" not in response.content.decode()
    own = client.get(f"/posts/{posts['b_mine'].pk}", **bearer(user))
    assert own.status_code == 200
    assert own.json()["title"] == "B-mine"
