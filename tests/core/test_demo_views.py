"""The demo's 404 and 405 answers come from the suite's one error mapping.

The views raise ``Http404`` and use ``require_http_methods``; ErrorMiddleware formats
both: RFC 9457 problem+json for API clients, a small HTML page for browsers.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from testproject.blog.models import Post

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
PROBLEM = "application/problem+json"


@pytest.fixture
def post(user: Any) -> Post:
    return Post.objects.create(title="Hello", body="text", author=user)


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["type"] == "about:blank"
    return body


# -- 404 ----------------------------------------------------------------------------------------
def test_missing_post_is_a_problem_document(client: Client) -> None:
    body = _problem(client.get("/posts/999999", **JSON), 404)
    assert body["title"] == "Not Found"


def test_missing_post_is_an_html_page_for_browsers(client: Client) -> None:
    response = client.get("/posts/999999", **HTML)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert b"<h1>404" in response.content


def test_delete_of_a_missing_post_is_404(client: Client) -> None:
    _problem(client.delete("/posts/999999", **JSON), 404)


def test_404_looks_like_an_unrouted_url(client: Client) -> None:
    """One format: a missing post and a URL that matches nothing read the same."""
    missing = client.get("/posts/999999", **JSON).json()
    unrouted = client.get("/no/such/page", **JSON).json()
    assert missing == unrouted


# -- 405 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_posts_rejects_other_methods_with_allow(client: Client, method: str) -> None:
    response = client.generic(method, "/posts", **JSON)
    _problem(response, 405)
    assert response["Allow"] == "GET, HEAD, POST"


@pytest.mark.parametrize("method", ["PUT", "PATCH", "POST"])
def test_post_detail_rejects_other_methods_with_allow(
    client: Client, post: Post, method: str
) -> None:
    response = client.generic(method, f"/posts/{post.pk}", **JSON)
    _problem(response, 405)
    assert response["Allow"] == "GET, HEAD, DELETE"


def test_405_is_an_html_page_for_browsers(client: Client) -> None:
    response = client.put("/posts", **HTML)
    assert response.status_code == 405
    assert response["Content-Type"].startswith("text/html")
    assert response["Allow"] == "GET, HEAD, POST"


# -- unchanged behaviour ------------------------------------------------------------------------
def test_existing_post_is_served(client: Client, post: Post) -> None:
    response = client.get(f"/posts/{post.pk}")
    assert response.status_code == 200
    assert response.json() == post.as_dict()


@pytest.mark.parametrize("path", ["/posts", "/posts/{pk}"])
def test_head_is_allowed(client: Client, post: Post, path: str) -> None:
    assert client.head(path.format(pk=post.pk)).status_code == 200


def test_anonymous_delete_of_an_existing_post_is_still_401(client: Client, post: Post) -> None:
    assert client.delete(f"/posts/{post.pk}", **JSON).status_code == 401
    assert Post.objects.filter(pk=post.pk).exists()
