"""The GraphQL route behind the suite's double-submit-cookie CSRF middleware, with the
demo schema: cookie sessions need X-CSRF-Token, bearer tokens and cookie-less requests
do not; the Gate-guarded deletePost mutation answers 401/403 in ``extensions.status``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from appframework.auth import TokenManager
from testproject.blog.models import Post
from tests.conftest import login_client

from .conftest import DEMO_SCHEMA, Configure
from .helpers import json_body

pytestmark = [pytest.mark.django_db]

ME = "{ me { email } }"
DELETE = "mutation($id: ID!) { deletePost(id: $id) }"


@pytest.fixture(autouse=True)
def _demo_schema(configure: Configure) -> None:
    configure(SCHEMA=DEMO_SCHEMA)


def gql(client: Client, query: str, variables: dict[str, Any] | None = None, **headers: Any) -> Any:
    body = json.dumps({"query": query, "variables": variables})
    return client.post("/graphql", data=body, content_type="application/json", **headers)


def session_login(client: Client, user: Any) -> str:
    """Log ``user`` in (signed session cookie), then GET / for the CSRF cookie."""
    login_client(client, user)
    response = client.get("/")
    assert response.status_code == 200
    return client.cookies["csrf_token"].value


@pytest.fixture
def post_by_user(user: Any) -> Post:
    return Post.objects.create(title="Mine", body="text", author=user)


# -- cookie sessions ---------------------------------------------------------------------------
def test_session_post_without_csrf_header_is_403(csrf_client: Client, user: Any) -> None:
    session_login(csrf_client, user)
    response = gql(csrf_client, ME)
    assert response.status_code == 403


def test_session_post_with_wrong_csrf_header_is_403(csrf_client: Client, user: Any) -> None:
    token = session_login(csrf_client, user)
    response = gql(csrf_client, ME, HTTP_X_CSRF_TOKEN=token[::-1])
    assert response.status_code == 403


def test_session_post_with_csrf_header_runs_as_the_user(csrf_client: Client, user: Any) -> None:
    token = session_login(csrf_client, user)
    response = gql(csrf_client, ME, HTTP_X_CSRF_TOKEN=token)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"me": {"email": user.email}}}


def test_session_mutation_without_csrf_header_is_403_and_does_nothing(
    csrf_client: Client, user: Any, post_by_user: Post
) -> None:
    session_login(csrf_client, user)
    response = gql(csrf_client, DELETE, {"id": str(post_by_user.pk)})
    assert response.status_code == 403
    assert Post.objects.filter(pk=post_by_user.pk).exists()


def test_anonymous_post_without_cookies_needs_no_csrf_token(csrf_client: Client) -> None:
    response = gql(csrf_client, ME)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"me": None}}


# -- bearer tokens ------------------------------------------------------------------------------
def test_bearer_post_without_csrf_token_runs_as_the_token_user(
    csrf_client: Client, user: Any
) -> None:
    token = TokenManager().issue(user)
    response = gql(csrf_client, ME, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert json_body(response) == {"data": {"me": {"email": user.email}}}


def test_bearer_post_next_to_another_users_session_cookie_is_the_token_user(
    csrf_client: Client, user: Any, other_user: Any
) -> None:
    session_login(csrf_client, other_user)
    token = TokenManager().issue(user)
    response = gql(csrf_client, ME, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert json_body(response) == {"data": {"me": {"email": user.email}}}


def test_tampered_bearer_token_is_anonymous(csrf_client: Client, user: Any) -> None:
    token = TokenManager().issue(user)
    response = gql(csrf_client, ME, HTTP_AUTHORIZATION=f"Bearer {token[:-2]}xx")
    assert response.status_code == 200
    assert json_body(response) == {"data": {"me": None}}


# -- the Gate-guarded mutation -----------------------------------------------------------------
def test_delete_post_by_its_author_is_allowed(
    csrf_client: Client, user: Any, post_by_user: Post
) -> None:
    token = session_login(csrf_client, user)
    response = gql(csrf_client, DELETE, {"id": str(post_by_user.pk)}, HTTP_X_CSRF_TOKEN=token)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"deletePost": True}}
    assert not Post.objects.filter(pk=post_by_user.pk).exists()


def test_delete_post_by_its_author_with_bearer_token_is_allowed(
    csrf_client: Client, user: Any, post_by_user: Post
) -> None:
    bearer = TokenManager().issue(user)
    response = gql(
        csrf_client, DELETE, {"id": str(post_by_user.pk)}, HTTP_AUTHORIZATION=f"Bearer {bearer}"
    )
    assert json_body(response) == {"data": {"deletePost": True}}


def test_delete_post_by_another_user_is_a_403_error(
    csrf_client: Client, other_user: Any, post_by_user: Post
) -> None:
    token = session_login(csrf_client, other_user)
    response = gql(csrf_client, DELETE, {"id": str(post_by_user.pk)}, HTTP_X_CSRF_TOKEN=token)
    assert response.status_code == 200
    body = json_body(response)
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["status"] == 403
    assert error["path"] == ["deletePost"]
    assert error["message"]
    assert Post.objects.filter(pk=post_by_user.pk).exists()


def test_delete_post_anonymously_is_a_401_error(csrf_client: Client, post_by_user: Post) -> None:
    response = gql(csrf_client, DELETE, {"id": str(post_by_user.pk)})
    assert response.status_code == 200
    body = json_body(response)
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["status"] == 401
    assert Post.objects.filter(pk=post_by_user.pk).exists()


def test_delete_missing_post_is_a_plain_graphql_error(csrf_client: Client, user: Any) -> None:
    token = session_login(csrf_client, user)
    body = json_body(gql(csrf_client, DELETE, {"id": "999999"}, HTTP_X_CSRF_TOKEN=token))
    assert body["data"] is None
    assert body["errors"][0]["message"] == "No post with id 999999."


# -- the GraphiQL page's CSRF wiring, end to end --------------------------------------------------
def _script(text: str, element_id: str) -> Any:
    match = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', text, re.S
    )
    assert match
    return json.loads(match.group(1))


@pytest.mark.parametrize(
    "csrf",
    [None, {"HEADER_NAME": "X-Custom-Csrf", "COOKIE_NAME": "custom_csrf"}],
    ids=["default-names", "custom-names"],
)
def test_what_the_graphiql_page_sends_passes_the_csrf_check(
    csrf_client: Client, configure: Configure, user: Any, csrf: dict[str, str] | None
) -> None:
    configure(SCHEMA=DEMO_SCHEMA, GRAPHIQL=True, csrf=csrf)
    login_client(csrf_client, user)
    page = csrf_client.get("/graphql", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    text = page.content.decode()
    header, cookie = _script(text, "graphql-csrf-header"), _script(text, "graphql-csrf-cookie")
    value = csrf_client.cookies[cookie].value  # what the page's script reads
    meta = "HTTP_" + header.upper().replace("-", "_")
    response = gql(csrf_client, ME, **{meta: value})
    assert response.status_code == 200, response.content
    assert json_body(response) == {"data": {"me": {"email": user.email}}}
