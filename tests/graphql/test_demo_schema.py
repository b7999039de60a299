"""The demo schema's data guards: ``posts`` returns at most 100 posts whatever ``limit``
asks for, and an author's ``email`` is visible only to that user and to users the Gate
allows ``view-email`` — null (not an error) for everyone else, anonymous readers
included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from appframework.auth import TokenManager
from testproject.blog.models import Post
from testproject.blog.schema import MAX_POSTS
from tests.conftest import login_client

from .conftest import DEMO_SCHEMA, Configure
from .helpers import is_ok, post

pytestmark = [pytest.mark.django_db]

AUTHOR_EMAILS = "{ posts { id author { id email name } } }"


@pytest.fixture(autouse=True)
def _demo_schema(configure: Configure) -> None:
    configure(SCHEMA=DEMO_SCHEMA)


@pytest.fixture
def posts_by_user(user: Any) -> list[Post]:
    return [Post.objects.create(title=f"Post {i}", author=user) for i in range(2)]


def emails(body: dict[str, Any]) -> list[str | None]:
    return [p["author"]["email"] for p in body["data"]["posts"]]


# -- email ------------------------------------------------------------------------------------
def test_anonymous_reader_gets_null_author_emails_and_no_error(
    client: Client, posts_by_user: list[Post]
) -> None:
    body = is_ok(post(client, "{ posts { author { email } } }"))
    assert body["data"]["posts"] == [{"author": {"email": None}}] * len(posts_by_user)


def test_anonymous_reader_still_gets_the_other_author_fields(
    client: Client, user: Any, posts_by_user: list[Post]
) -> None:
    body = is_ok(post(client, AUTHOR_EMAILS))
    assert {p["author"]["name"] for p in body["data"]["posts"]} == {user.name}


def test_the_author_sees_their_own_email(
    client: Client, user: Any, posts_by_user: list[Post]
) -> None:
    login_client(client, user)
    body = is_ok(post(client, AUTHOR_EMAILS))
    assert emails(body) == [user.email] * len(posts_by_user)


def test_the_author_sees_their_own_email_with_a_bearer_token(
    client: Client, user: Any, posts_by_user: list[Post]
) -> None:
    token = TokenManager().issue(user)
    response = client.post(
        "/graphql",
        data=json.dumps({"query": AUTHOR_EMAILS}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    body = is_ok(response)
    assert emails(body) == [user.email] * len(posts_by_user)


def test_another_user_gets_null_for_someone_elses_email(
    client: Client, other_user: Any, posts_by_user: list[Post]
) -> None:
    login_client(client, other_user)
    body = is_ok(post(client, AUTHOR_EMAILS))
    assert emails(body) == [None] * len(posts_by_user)
    assert is_ok(post(client, "{ me { email } }"))["data"]["me"]["email"] == other_user.email


def test_each_author_email_is_decided_separately(
    client: Client, user: Any, other_user: Any
) -> None:
    Post.objects.create(title="Alice's", author=user)
    Post.objects.create(title="Bob's", author=other_user)
    login_client(client, other_user)
    body = is_ok(post(client, "{ posts { title author { email } } }"))
    seen = {p["title"]: p["author"]["email"] for p in body["data"]["posts"]}
    assert seen == {"Alice's": None, "Bob's": other_user.email}


@pytest.mark.parametrize("grant", ["admin-role", "view-email-permission"])
def test_a_user_the_gate_allows_view_email_sees_other_emails(
    client: Client, user: Any, other_user: Any, posts_by_user: list[Post], grant: str
) -> None:
    from appframework.authorization.models import Permission, Role

    if grant == "admin-role":
        other_user.assign_role("admin")
    else:
        role = Role.objects.create(name="support")
        role.permissions.add(Permission.objects.create(name="users.view-email"))
        other_user.assign_role(role)
    login_client(client, other_user)
    body = is_ok(post(client, AUTHOR_EMAILS))
    assert emails(body) == [user.email] * len(posts_by_user)


def test_an_unrelated_role_does_not_reveal_emails(
    client: Client, other_user: Any, posts_by_user: list[Post]
) -> None:
    other_user.assign_role("editor")
    login_client(client, other_user)
    assert emails(is_ok(post(client, AUTHOR_EMAILS))) == [None] * len(posts_by_user)


def test_email_is_nullable_in_the_schema(client: Client) -> None:
    body = is_ok(post(client, '{ __type(name: "User") { fields { name type { kind } } } }'))
    kinds = {f["name"]: f["type"]["kind"] for f in body["data"]["__type"]["fields"]}
    assert kinds["email"] == "SCALAR"  # not NON_NULL: null is a legal answer


# -- list size ------------------------------------------------------------------------------------
def test_posts_returns_at_most_the_maximum_whatever_limit_asks(client: Client, user: Any) -> None:
    Post.objects.bulk_create(Post(title=f"P{i}", author=user) for i in range(MAX_POSTS + 5))
    assert MAX_POSTS == 100
    for limit in (MAX_POSTS + 1, 10_000, 2**31 - 1):
        body = is_ok(post(client, f"{{ posts(limit: {limit}) {{ id }} }}"))
        assert len(body["data"]["posts"]) == MAX_POSTS
    assert len(is_ok(post(client, "{ posts { id } }"))["data"]["posts"]) == 20
    assert is_ok(post(client, "{ posts(limit: -5) { id } }"))["data"]["posts"] == []
