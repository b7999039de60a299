"""``authorize(request, ability, *args)``: login, then the Gate, from a request.

Login first (anonymous → 401), then the Gate (denied → 403), returning the user. The
user is the session's, else the bearer token's. The demo route ``DELETE /posts/<id>``
and test-only views (urls.py) show the HTTP side; the ``authorized`` decorator fetches
the object first (missing → 404).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, Client

from appframework.auth import TokenManager
from appframework.authorization import authorize, authorize_sync
from appframework.exceptions import ForbiddenException, UnauthorizedException
from testproject.blog.models import Post, User
from tests.conftest import login_client

from .conftest import async_request, bearer, sync_request

URLS = "tests.authorization.urls"
JSON = {"HTTP_ACCEPT": "application/json"}


# -- authorize_sync / authorize called directly ----------------------------------------------
@pytest.mark.django_db
class TestAuthorizeSync:
    def test_anonymous_gets_unauthorized_401(self, post: Any) -> None:
        with pytest.raises(UnauthorizedException) as info:
            authorize_sync(sync_request(), "delete-post", post)
        assert info.value.status_code == 401

    def test_denied_gets_forbidden_403(self, post: Any, other_user: Any) -> None:
        with pytest.raises(ForbiddenException) as info:
            authorize_sync(sync_request(other_user), "delete-post", post)
        assert info.value.status_code == 403
        assert not isinstance(info.value, UnauthorizedException)

    def test_allowed_returns_the_user(self, post: Any, user: Any) -> None:
        assert authorize_sync(sync_request(user), "delete-post", post) is user

    def test_editor_role_is_allowed_on_someone_elses_post(self, post: Any, editor: Any) -> None:
        assert authorize_sync(sync_request(editor), "delete-post", post) is editor

    def test_superuser_gets_no_bypass_while_django_has_perm_short_circuits(
        self, post: Any, superuser: Any
    ) -> None:
        # Django's PermissionsMixin.has_perm answers True for any active superuser
        # before asking a backend; authorize() asks the Gate directly, which says no.
        assert superuser.has_perm("delete-post", post) is True
        with pytest.raises(ForbiddenException):
            authorize_sync(sync_request(superuser), "delete-post", post)

    def test_bearer_token_user_is_authorized(self, post: Any, user: Any) -> None:
        token = TokenManager().issue(user)
        request = sync_request(None, **bearer(token))
        authorized = authorize_sync(request, "delete-post", post)
        assert authorized.pk == user.pk

    def test_bearer_token_user_can_be_denied(self, post: Any, other_user: Any) -> None:
        token = TokenManager().issue(other_user)
        with pytest.raises(ForbiddenException):
            authorize_sync(sync_request(None, **bearer(token)), "delete-post", post)

    def test_invalid_bearer_token_is_anonymous(self, post: Any) -> None:
        with pytest.raises(UnauthorizedException):
            authorize_sync(sync_request(None, **bearer("not-a-token")), "delete-post", post)

    def test_unknown_ability_raises_key_error_for_a_logged_in_user(
        self, post: Any, user: Any
    ) -> None:
        with pytest.raises(KeyError):
            authorize_sync(sync_request(user), "no-such-ability", post)

    def test_multiple_arguments_reach_the_gate(self, user: Any, bound_gate: Any) -> None:
        seen: list[tuple[Any, ...]] = []
        bound_gate.define("transfer", lambda u, *args: seen.append(args) or True)
        assert authorize_sync(sync_request(user), "transfer", "a", "b") is user
        assert seen == [("a", "b")]


@pytest.mark.django_db(transaction=True)
class TestAuthorizeAsync:
    async def test_anonymous_gets_unauthorized_401(self, post: Any) -> None:
        with pytest.raises(UnauthorizedException) as info:
            await authorize(async_request(), "delete-post", post)
        assert info.value.status_code == 401

    async def test_denied_gets_forbidden_403(self, post: Any, other_user: Any) -> None:
        with pytest.raises(ForbiddenException) as info:
            await authorize(async_request(other_user), "delete-post", post)
        assert info.value.status_code == 403

    async def test_allowed_returns_the_user(self, post: Any, user: Any) -> None:
        assert await authorize(async_request(user), "delete-post", post) is user

    async def test_editor_is_allowed_with_a_role_query_under_async(
        self, post: Any, editor: Any
    ) -> None:
        fresh = await User.objects.aget(pk=editor.pk)  # roles not loaded yet
        assert await authorize(async_request(fresh), "delete-post", post) is fresh

    async def test_superuser_gets_no_bypass_while_django_ahas_perm_short_circuits(
        self, post: Any, superuser: Any
    ) -> None:
        assert await superuser.ahas_perm("delete-post", post) is True
        with pytest.raises(ForbiddenException):
            await authorize(async_request(superuser), "delete-post", post)

    async def test_bearer_token_user_is_authorized(self, post: Any, user: Any) -> None:
        token = TokenManager().issue(user)
        authorized = await authorize(async_request(None, **bearer(token)), "delete-post", post)
        assert authorized.pk == user.pk

    async def test_bearer_token_user_can_be_denied(self, post: Any, other_user: Any) -> None:
        token = TokenManager().issue(other_user)
        with pytest.raises(ForbiddenException):
            await authorize(async_request(None, **bearer(token)), "delete-post", post)


# -- over HTTP: the demo route DELETE /posts/<id> ----------------------------------------------
@pytest.mark.django_db
class TestDemoDeleteRoute:
    def test_anonymous_delete_is_401_and_post_survives(self, client: Client, post: Any) -> None:
        response = client.delete(f"/posts/{post.pk}", **JSON)
        assert response.status_code == 401
        assert Post.objects.filter(pk=post.pk).exists()

    def test_other_user_delete_is_403_and_post_survives(
        self, client: Client, post: Any, other_user: Any
    ) -> None:
        response = login_client(client, other_user).delete(f"/posts/{post.pk}", **JSON)
        assert response.status_code == 403
        assert Post.objects.filter(pk=post.pk).exists()

    def test_author_delete_is_204(self, client: Client, post: Any, user: Any) -> None:
        response = login_client(client, user).delete(f"/posts/{post.pk}", **JSON)
        assert response.status_code == 204
        assert not Post.objects.filter(pk=post.pk).exists()

    def test_editor_delete_is_204(self, client: Client, post: Any, editor: Any) -> None:
        response = login_client(client, editor).delete(f"/posts/{post.pk}", **JSON)
        assert response.status_code == 204
        assert not Post.objects.filter(pk=post.pk).exists()

    def test_superuser_not_author_nor_editor_delete_is_403(
        self, client: Client, post: Any, superuser: Any
    ) -> None:
        assert superuser.has_perm("delete-post", post) is True  # Django's superuser shortcut
        response = login_client(client, superuser).delete(f"/posts/{post.pk}", **JSON)
        assert response.status_code == 403
        assert Post.objects.filter(pk=post.pk).exists()

    def test_html_client_denied_is_still_403(
        self, client: Client, post: Any, other_user: Any
    ) -> None:
        response = login_client(client, other_user).delete(
            f"/posts/{post.pk}", HTTP_ACCEPT="text/html"
        )
        assert response.status_code == 403

    def test_bearer_author_delete_is_204(self, client: Client, post: Any, user: Any) -> None:
        token = TokenManager().issue(user)
        response = client.delete(f"/posts/{post.pk}", **bearer(token), **JSON)
        assert response.status_code == 204
        assert not Post.objects.filter(pk=post.pk).exists()

    def test_bearer_other_user_delete_is_403(
        self, client: Client, post: Any, other_user: Any
    ) -> None:
        token = TokenManager().issue(other_user)
        response = client.delete(f"/posts/{post.pk}", **bearer(token), **JSON)
        assert response.status_code == 403

    def test_invalid_bearer_delete_is_401(self, client: Client, post: Any) -> None:
        response = client.delete(f"/posts/{post.pk}", **bearer("forged"), **JSON)
        assert response.status_code == 401


# -- test-only views calling authorize / authorize_sync ---------------------------------------
@pytest.mark.django_db
@pytest.mark.urls(URLS)
class TestAuthorizeInViews:
    @pytest.mark.parametrize("kind", ["authorize-sync", "authorize-async"])
    def test_view_statuses(
        self, client: Client, post: Any, user: Any, other_user: Any, kind: str
    ) -> None:
        url = f"/authz/{kind}/posts/{post.pk}"
        assert Client().get(url, **JSON).status_code == 401
        assert login_client(Client(), other_user).get(url, **JSON).status_code == 403
        response = login_client(client, user).get(url, **JSON)
        assert response.status_code == 200
        assert response.json() == {"user": user.pk}

    @pytest.mark.parametrize("kind", ["authorize-sync", "authorize-async"])
    def test_view_with_bearer(self, client: Client, post: Any, user: Any, kind: str) -> None:
        token = TokenManager().issue(user)
        response = client.get(f"/authz/{kind}/posts/{post.pk}", **bearer(token), **JSON)
        assert response.status_code == 200
        assert response.json() == {"user": user.pk}


# -- the authorized view decorator -------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.urls(URLS)
class TestAuthorizedDecorator:
    @pytest.fixture(params=["sync", "async"])
    def kind(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    def test_missing_object_is_404_not_403(self, client: Client, user: Any, kind: str) -> None:
        response = login_client(client, user).get(f"/authz/{kind}/posts/999999", **JSON)
        assert response.status_code == 404

    def test_anonymous_is_401(self, client: Client, post: Any, kind: str) -> None:
        response = client.get(f"/authz/{kind}/posts/{post.pk}", **JSON)
        assert response.status_code == 401

    def test_denied_is_403(self, client: Client, post: Any, other_user: Any, kind: str) -> None:
        response = login_client(client, other_user).get(f"/authz/{kind}/posts/{post.pk}", **JSON)
        assert response.status_code == 403

    def test_superuser_is_403(self, client: Client, post: Any, superuser: Any, kind: str) -> None:
        response = login_client(client, superuser).get(f"/authz/{kind}/posts/{post.pk}", **JSON)
        assert response.status_code == 403

    def test_allowed_runs_view_with_object_as_kwarg(
        self, client: Client, post: Any, user: Any, kind: str
    ) -> None:
        response = login_client(client, user).get(f"/authz/{kind}/posts/{post.pk}", **JSON)
        assert response.status_code == 200
        assert response.json() == {"kind": kind, "post": post.pk, "title": post.title}

    def test_allowed_with_bearer_token(
        self, client: Client, post: Any, user: Any, kind: str
    ) -> None:
        token = TokenManager().issue(user)
        response = client.get(f"/authz/{kind}/posts/{post.pk}", **bearer(token), **JSON)
        assert response.status_code == 200
        assert response.json()["post"] == post.pk

    def test_custom_url_kwarg_and_as_kwarg(self, client: Client, post: Any, user: Any) -> None:
        response = login_client(client, user).get(f"/authz/named/posts/{post.pk}", **JSON)
        assert response.status_code == 200
        # the URL kwarg is replaced by the object, not passed alongside it
        assert response.json() == {"kind": "sync-named", "post": post.pk, "rest": []}

    def test_unparsable_lookup_value_is_404(self, user: Any) -> None:
        from django.http import Http404

        from . import views
        from .conftest import sync_request

        with pytest.raises(Http404):
            views.sync_edit(sync_request(user), id="not-a-number")

    def test_wrapped_view_keeps_its_name_and_colour(self) -> None:
        from asgiref.sync import iscoroutinefunction

        from . import views

        assert views.sync_edit.__name__ == "sync_edit"
        assert views.async_edit.__name__ == "async_edit"
        assert iscoroutinefunction(views.async_edit)
        assert not iscoroutinefunction(views.sync_edit)


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls(URLS)
class TestAuthorizedDecoratorAsyncClient:
    async def test_async_view_under_async_client(
        self, post: Any, user: Any, other_user: Any
    ) -> None:
        url = f"/authz/async/posts/{post.pk}"
        assert (await AsyncClient().get(url, **JSON)).status_code == 401
        denied = AsyncClient()
        await denied.aforce_login(other_user, backend="appframework.auth.AuthManager")
        assert (await denied.get(url, **JSON)).status_code == 403
        allowed = AsyncClient()
        await allowed.aforce_login(user, backend="appframework.auth.AuthManager")
        response = await allowed.get(url, **JSON)
        assert response.status_code == 200
        assert response.json()["post"] == post.pk
        assert (await allowed.get("/authz/async/posts/999999", **JSON)).status_code == 404


# -- the demo's role-based ability through the decorator: POST /posts/<id>/publish ----------
@pytest.mark.django_db
class TestDemoPublishRoute:
    def test_user_without_role_or_permission_is_403(
        self, client: Client, post: Any, user: Any
    ) -> None:
        assert (
            login_client(client, user).post(f"/posts/{post.pk}/publish", **JSON).status_code == 403
        )

    def test_moderator_role_is_allowed(self, client: Client, post: Any, other_user: Any) -> None:
        other_user.assign_role("moderator")
        response = login_client(client, other_user).post(f"/posts/{post.pk}/publish", **JSON)
        assert response.status_code == 200
        assert response.json() == {"published": post.pk}

    def test_publish_permission_through_any_role_is_allowed(
        self, client: Client, post: Any, other_user: Any
    ) -> None:
        from appframework.authorization import Permission, Role

        role = Role.objects.create(name="writer")
        role.permissions.add(Permission.objects.create(name="posts.publish"))
        other_user.roles.add(role)
        response = login_client(client, other_user).post(f"/posts/{post.pk}/publish", **JSON)
        assert response.status_code == 200

    def test_anonymous_is_401_and_missing_post_is_404(
        self, client: Client, post: Any, user: Any
    ) -> None:
        assert client.post(f"/posts/{post.pk}/publish", **JSON).status_code == 401
        assert login_client(client, user).post("/posts/999999/publish", **JSON).status_code == 404
