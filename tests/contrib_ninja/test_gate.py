"""appframework.contrib.ninja.gate on sync and async ninja operations, and
``authorize_sync`` / ``authorize`` called inside one: 401 for anonymous (before any
lookup), 404 for a missing or another tenant's post, 403 ``ability_denied`` when the
Gate says no, and the operation itself when it says yes."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework_tenancy import as_tenant
from testproject.blog.models import Post

from .conftest import JSON, bearer, make_editor, problem

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.contrib_ninja.urls")]

# The API's auth (Bearer, session) in front of the gate, and the gate alone (auth=None).
GATED = ["/t/posts/{}", "/t/aposts/{}", "/t/open-posts/{}", "/t/aopen-posts/{}"]
OPEN = ["/t/open-posts/{}", "/t/aopen-posts/{}"]
AUTHORIZE_INSIDE = ["/t/authorize/{}", "/t/aauthorize/{}"]


@pytest.mark.parametrize("url", GATED)
def test_gate_answers_anonymous_with_401_whether_or_not_the_post_exists(
    url: str, other_user: Any
) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    problem(Client().delete(url.format(post.pk), **JSON), 401, "not_authenticated")
    problem(Client().delete(url.format(post.pk + 1000), **JSON), 401, "not_authenticated")
    assert Post.objects.filter(pk=post.pk).exists()


@pytest.mark.parametrize("url", GATED)
def test_gate_denies_another_users_post_with_403_ability_denied(
    url: str, user: Any, other_user: Any
) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    body = problem(Client().delete(url.format(post.pk), **bearer(user)), 403, "ability_denied")
    assert "delete-post" in body["detail"]
    assert Post.objects.filter(pk=post.pk).exists()


@pytest.mark.parametrize("url", GATED)
def test_gate_answers_a_missing_id_with_404_not_found(url: str, user: Any) -> None:
    problem(Client().delete(url.format(999999), **bearer(user)), 404, "not_found")


@pytest.mark.parametrize("url", GATED)
def test_gate_answers_another_tenants_post_with_404_even_for_an_editor(
    url: str, other_user: Any
) -> None:
    editor = make_editor()
    with as_tenant(2):
        foreign = Post.objects.create(title="Globex only", author=other_user)
    problem(Client().delete(url.format(foreign.pk), **bearer(editor)), 404, "not_found")
    with as_tenant(2):
        assert Post.objects.filter(pk=foreign.pk).exists()


@pytest.mark.parametrize("url", GATED)
def test_gate_lets_the_author_delete_with_204_and_the_row_is_gone(url: str, user: Any) -> None:
    post = Post.objects.create(title="mine", author=user)
    response = Client().delete(url.format(post.pk), **bearer(user))
    assert response.status_code == 204, response.content
    assert not Post.objects.filter(pk=post.pk).exists()


@pytest.mark.parametrize("url", GATED)
def test_gate_lets_an_editor_delete_someone_elses_post(url: str, other_user: Any) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    response = Client().delete(url.format(post.pk), **bearer(make_editor()))
    assert response.status_code == 204, response.content
    assert not Post.objects.filter(pk=post.pk).exists()


def test_gate_accepts_a_signed_in_session_on_a_sync_and_an_async_operation(user: Any) -> None:
    from tests.conftest import csrf_cookie, login_client

    client = login_client(Client(enforce_csrf_checks=True), user)
    token = csrf_cookie(client)
    for url in GATED:
        post = Post.objects.create(title="mine", author=user)
        response = client.delete(url.format(post.pk), HTTP_X_CSRFTOKEN=token, **JSON)
        assert response.status_code == 204, (url, response.content)
        assert not Post.objects.filter(pk=post.pk).exists()


@pytest.mark.parametrize("url", AUTHORIZE_INSIDE)
def test_authorize_inside_an_operation_is_401_for_anonymous_not_403(
    url: str, other_user: Any
) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    problem(Client().post(url.format(post.pk), **JSON), 401, "not_authenticated")


@pytest.mark.parametrize("url", AUTHORIZE_INSIDE)
def test_authorize_inside_an_operation_is_403_when_denied_and_passes_the_author(
    url: str, user: Any, other_user: Any
) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    problem(Client().post(url.format(post.pk), **bearer(user)), 403, "ability_denied")
    allowed = Client().post(url.format(post.pk), **bearer(other_user))
    assert allowed.status_code == 200, allowed.content
    assert allowed.json() == {"allowed": other_user.email}
