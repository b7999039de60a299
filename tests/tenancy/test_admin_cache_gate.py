"""The side doors: the Django admin, serializers and ``dumpdata``, signal receivers, the
cache, roles, the Gate's tenant guard and Django's superuser shortcut in ``has_perm``."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import serializers
from django.core.cache import cache
from django.core.management import call_command
from django.db.models.signals import post_save
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory, override_settings
from django.views.decorators.cache import cache_page

from appframework.authorization import Gate, authorize_sync
from appframework.container import container
from appframework.exceptions import ForbiddenException
from appframework_tenancy import (
    TenantRequired,
    all_tenants,
    as_tenant,
    current_tenant_id,
)
from appframework_tenancy.cache import make_key
from appframework_tenancy.gate import tenant_guard
from testproject.blog.models import Post as BlogPost
from testproject.blog.models import User
from tests.conftest import login_client
from tests.tenancy.lab.models import Comment
from tests.tenancy.lab.models import Post as LabPost

pytestmark = pytest.mark.django_db

A, B = 1, 2
JSON = {"HTTP_ACCEPT": "application/json"}


def gate() -> Gate:
    resolved: Gate = container.resolve(Gate)
    return resolved


@pytest.fixture
def superuser(db: Any, password: str) -> Any:
    """A superuser (staff) who is a member of tenant A only."""
    admin = User.objects.create_superuser("root@example.com", password, name="Root")
    admin.tenants.set([A])
    return admin


@pytest.fixture
def blog_posts(user: Any) -> dict[str, BlogPost]:
    """One demo post per tenant, both written by ``user``."""
    with as_tenant(A):
        a_post = BlogPost.objects.create(title="Acme secret plan", author=user)
    with as_tenant(B):
        b_post = BlogPost.objects.create(title="Globex secret plan", author=user)
    return {"a_post": a_post, "b_post": b_post}


# -- the admin -------------------------------------------------------------------------------------
CHANGELIST = "/admin/blog/post/"


def test_admin_post_changelist_lists_only_the_resolved_tenants_posts(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    login_client(client, superuser)
    response = client.get(CHANGELIST)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Acme secret plan" in page
    assert "Globex secret plan" not in page


def test_admin_post_changelist_with_no_tenant_selected_is_unscoped(
    client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    """No tenant selected means no filter: without TenantMiddleware (these tests' base
    settings) the admin lists every tenant's posts; the demo's stack always resolves one."""
    login_client(client, superuser)
    page = client.get(CHANGELIST).content.decode()
    assert "Acme secret plan" in page
    assert "Globex secret plan" in page


def test_admin_change_view_of_another_tenants_post_is_not_found(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    """Django answers a missing object with a redirect to the admin index and a
    "doesn't exist" message; the foreign post is never shown."""
    login_client(client, superuser)
    foreign = blog_posts["b_post"]
    response = client.get(f"{CHANGELIST}{foreign.pk}/change/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    index = client.get("/admin/")
    page = index.content.decode()
    assert f"with ID \u201c{foreign.pk}\u201d doesn\u2019t exist" in page
    assert "Globex secret plan" not in page


def test_admin_change_view_of_the_resolved_tenants_post_opens(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    login_client(client, superuser)
    response = client.get(f"{CHANGELIST}{blog_posts['a_post'].pk}/change/")
    assert response.status_code == 200
    assert "Acme secret plan" in response.content.decode()


def test_admin_delete_view_of_another_tenants_post_is_not_found_and_deletes_nothing(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    login_client(client, superuser)
    foreign = blog_posts["b_post"]
    response = client.post(f"{CHANGELIST}{foreign.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert BlogPost.unscoped.filter(pk=foreign.pk).exists()


def test_admin_history_of_another_tenants_post_is_not_found(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    """Like the change view: a redirect to the admin index with a "doesn't exist"
    message; the history page of the resolved tenant's own post opens."""
    login_client(client, superuser)
    foreign = blog_posts["b_post"]
    response = client.get(f"{CHANGELIST}{foreign.pk}/history/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    index = client.get("/admin/")
    assert index.status_code == 200
    page = index.content.decode()
    assert f"with ID \u201c{foreign.pk}\u201d doesn\u2019t exist" in page
    assert "Globex secret plan" not in page
    own = client.get(f"{CHANGELIST}{blog_posts['a_post'].pk}/history/")
    assert own.status_code == 200
    assert "Acme secret plan" in own.content.decode()


# -- serializers and dumpdata ------------------------------------------------------------------------
def test_serializing_a_scoped_queryset_includes_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        dumped = json.loads(serializers.serialize("json", LabPost.objects.all()))
    assert [row["fields"]["title"] for row in dumped] == ["A-post"]
    assert [row["fields"]["tenant_id"] for row in dumped] == [A]


def test_dumpdata_follows_the_scoped_default_manager(two_tenants: dict[str, Any]) -> None:
    out = io.StringIO()
    with as_tenant(B):
        call_command("dumpdata", "tenancy_lab.post", stdout=out)
    assert [row["fields"]["title"] for row in json.loads(out.getvalue())] == ["B-post"]


def test_dumpdata_all_uses_the_base_manager_and_dumps_every_tenant(
    two_tenants: dict[str, Any],
) -> None:
    """Documented: ``--all`` is an operator's tool; it bypasses the scoped manager."""
    out = io.StringIO()
    with as_tenant(A):
        call_command("dumpdata", "tenancy_lab.post", "--all", stdout=out)
    rows = json.loads(out.getvalue())
    assert sorted(row["fields"]["title"] for row in rows) == ["A-post", "B-post"]


# -- signal receivers -----------------------------------------------------------------------------------
@pytest.fixture
def comment_on_new_post() -> Iterator[list[Any]]:
    """A post_save receiver on lab posts that creates a Comment for each new post."""
    seen: list[Any] = []

    def receiver(sender: Any, instance: LabPost, created: bool, **kwargs: Any) -> None:
        if created:
            seen.append(current_tenant_id())
            Comment.objects.create(post=instance, body=f"audit of {instance.title}")

    post_save.connect(receiver, sender=LabPost, dispatch_uid="test-comment-on-new-post")
    try:
        yield seen
    finally:
        post_save.disconnect(sender=LabPost, dispatch_uid="test-comment-on-new-post")


def test_a_row_created_by_a_post_save_receiver_gets_the_current_tenant(
    comment_on_new_post: list[Any],
) -> None:
    with as_tenant(B):
        post = LabPost.objects.create(title="with audit")
    assert comment_on_new_post == [B]
    audit = Comment.unscoped.get(post=post)
    assert audit.tenant_id == B
    with as_tenant(A):
        assert not Comment.objects.filter(body="audit of with audit").exists()


def test_a_receiver_creating_rows_with_no_tenant_selected_is_refused(
    comment_on_new_post: list[Any],
) -> None:
    """A save with no tenant selected (maintenance code naming the tenant itself) runs
    its receivers with no tenant too: the receiver's new row cannot guess one. The post
    itself is written; the refusal is the receiver's Comment."""
    with pytest.raises(TenantRequired) as refused:
        LabPost.objects.create(title="named tenant", tenant_id=B)
    assert comment_on_new_post == [None]  # the receiver ran, with no tenant selected
    assert any(entry.name == "receiver" for entry in refused.traceback)
    assert list(LabPost.unscoped.values_list("title", "tenant_id")) == [("named tenant", B)]
    assert not Comment.unscoped.exists()


def test_a_receiver_that_enters_the_instances_tenant_creates_rows_in_that_tenant() -> None:
    def receiver(sender: Any, instance: LabPost, created: bool, **kwargs: Any) -> None:
        if created:
            with as_tenant(instance.tenant_id):
                Comment.objects.create(post=instance, body="audit")

    post_save.connect(receiver, sender=LabPost, dispatch_uid="test-audit-in-instance-tenant")
    try:
        post = LabPost.objects.create(title="named tenant", tenant_id=B)
    finally:
        post_save.disconnect(sender=LabPost, dispatch_uid="test-audit-in-instance-tenant")
    assert Comment.unscoped.get(post=post).tenant_id == B


# -- the cache ---------------------------------------------------------------------------------------
TENANT_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "tenancy-cache-keys",
        "KEY_FUNCTION": "appframework_tenancy.cache.make_key",
    }
}
PLAIN_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "tenancy-cache-plain",
    }
}


def test_make_key_differs_per_tenant() -> None:
    with as_tenant(A):
        key_a = make_key("dashboard", "", 1)
    with as_tenant(B):
        key_b = make_key("dashboard", "", 1)
    assert key_a != key_b
    assert key_a.endswith(":dashboard")
    assert key_b.endswith(":dashboard")


def test_make_key_with_no_tenant_and_with_all_tenants_differs_from_every_tenant_key() -> None:
    none_key = make_key("dashboard", "p", 1)
    with all_tenants():
        all_key = make_key("dashboard", "p", 1)
    with as_tenant(A):
        a_key = make_key("dashboard", "p", 1)
    with as_tenant(B):
        b_key = make_key("dashboard", "p", 1)
    assert len({none_key, all_key, a_key, b_key}) == 4


def test_make_key_keeps_the_prefix_and_version_apart() -> None:
    with as_tenant(A):
        assert make_key("k", "p1", 1) != make_key("k", "p2", 1)
        assert make_key("k", "p", 1) != make_key("k", "p", 2)


def test_a_cached_value_of_one_tenant_is_invisible_to_another() -> None:
    with override_settings(CACHES=TENANT_CACHE):
        with as_tenant(A):
            cache.set("dashboard", "Acme numbers")
        with as_tenant(B):
            assert cache.get("dashboard") is None
            cache.set("dashboard", "Globex numbers")
        with as_tenant(A):
            assert cache.get("dashboard") == "Acme numbers"
        with as_tenant(B):
            assert cache.get("dashboard") == "Globex numbers"
        assert cache.get("dashboard") is None
        with all_tenants():
            assert cache.get("dashboard") is None
        cache.clear()


def tenant_page(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"tenant {current_tenant_id()}")


def test_cache_page_with_the_tenant_key_function_serves_each_tenant_its_own_page() -> None:
    with override_settings(CACHES=TENANT_CACHE):
        view = cache_page(60)(tenant_page)
        factory = RequestFactory()
        with as_tenant(A):
            assert view(factory.get("/dashboard")).content == b"tenant 1"
        with as_tenant(B):
            assert view(factory.get("/dashboard")).content == b"tenant 2"
        with as_tenant(A):
            assert view(factory.get("/dashboard")).content == b"tenant 1"
        cache.clear()


def test_cache_page_without_the_tenant_key_function_serves_one_tenants_page_to_another() -> None:
    """Why the key function exists: with a header/session/token resolver, Django's page
    cache key is the URL only."""
    with override_settings(CACHES=PLAIN_CACHE):
        view = cache_page(60)(tenant_page)
        factory = RequestFactory()
        with as_tenant(A):
            assert view(factory.get("/dashboard")).content == b"tenant 1"
        with as_tenant(B):
            assert view(factory.get("/dashboard")).content == b"tenant 1"
        cache.clear()


# -- roles ---------------------------------------------------------------------------------------------
def test_the_role_assignment_table_has_no_tenant_column() -> None:
    through = User.roles.through
    columns = {field.column for field in through._meta.concrete_fields}
    assert through._meta.db_table == "user_roles"
    assert "tenant_id" not in columns


def test_a_users_role_applies_in_every_tenant(user: Any) -> None:
    """Roles are global: the role and its permissions hold whichever tenant is current."""
    from appframework.authorization.models import Permission, Role

    role = Role.objects.create(name="editor")
    role.permissions.add(Permission.objects.create(name="posts.publish"))
    user.assign_role(role)
    answers = []
    for tenant in (A, B):
        with as_tenant(tenant):
            fresh = User.objects.get(pk=user.pk)
            answers.append((fresh.has_role("editor"), fresh.has_permission("posts.publish")))
    assert answers == [(True, True), (True, True)]


def test_a_role_loaded_under_one_tenant_gives_the_same_answer_under_another(user: Any) -> None:
    user.assign_role("moderator")
    with as_tenant(A):
        loaded = User.objects.get(pk=user.pk)
        assert loaded.has_role("moderator")
    with as_tenant(B):
        assert loaded.has_role("moderator")
        assert User.objects.get(pk=user.pk).has_role("moderator")


def test_a_role_based_ability_of_the_gate_is_the_same_in_every_tenant(
    other_user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    """An editor may delete any post of the current tenant, in every tenant."""
    other_user.assign_role("editor")
    with as_tenant(A):
        assert gate().allows_sync(other_user, "delete-post", blog_posts["a_post"])
    with as_tenant(B):
        assert gate().allows_sync(other_user, "delete-post", blog_posts["b_post"])


# -- the Gate's tenant guard ----------------------------------------------------------------------------
def test_the_tenant_guard_is_one_of_the_gates_before_hooks() -> None:
    assert tenant_guard in gate()._before


def test_the_tenant_guard_denies_an_ability_on_another_tenants_object_the_policy_allows(
    user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    foreign = blog_posts["b_post"]  # written by `user`: the policy lets its author update it
    with as_tenant(A):
        decision = gate().inspect_sync(user, "update-post", foreign)
        assert not decision.allowed
        assert decision.source == "before:appframework_tenancy.gate.tenant_guard"
        assert not gate().allows_sync(user, "delete-post", foreign)


def test_the_tenant_guard_lets_the_policy_decide_for_an_object_of_the_current_tenant(
    user: Any, other_user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    with as_tenant(B):
        assert gate().inspect_sync(user, "update-post", blog_posts["b_post"]).source == (
            "policy:PostPolicy.update_post"
        )
        assert gate().allows_sync(user, "update-post", blog_posts["b_post"])
        assert not gate().allows_sync(other_user, "update-post", blog_posts["b_post"])


def test_the_tenant_guard_compares_tenant_ids_whatever_their_python_type(
    user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    with as_tenant(str(B)):
        assert gate().allows_sync(user, "update-post", blog_posts["b_post"])
    with as_tenant(str(A)):
        assert not gate().allows_sync(user, "update-post", blog_posts["b_post"])


def test_the_tenant_guard_does_not_interfere_under_all_tenants(
    user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    with all_tenants():
        for post in blog_posts.values():
            assert gate().inspect_sync(user, "update-post", post).source == (
                "policy:PostPolicy.update_post"
            )
            assert gate().allows_sync(user, "update-post", post)


def test_the_tenant_guard_does_not_interfere_with_no_tenant_selected(
    user: Any, other_user: Any, blog_posts: dict[str, BlogPost]
) -> None:
    for post in blog_posts.values():
        assert gate().allows_sync(user, "update-post", post)
        assert not gate().allows_sync(other_user, "update-post", post)


def test_the_tenant_guard_ignores_arguments_that_are_not_tenant_rows(user: Any) -> None:
    with as_tenant(A):
        assert tenant_guard(user, "view-email", user) is None
        assert tenant_guard(user, "create-post", BlogPost) is None
        assert gate().allows_sync(user, "create-post", BlogPost)


def test_an_unsaved_object_without_a_tenant_is_the_current_tenants(user: Any) -> None:
    # authorize(request, "create-post", Post(title=...)) inside a tenant: save() will
    # stamp the current tenant, so the guard lets the policy decide.
    draft = BlogPost(title="draft", author=user)
    with as_tenant(A):
        assert tenant_guard(user, "create-post", draft) is None
        assert gate().inspect_sync(user, "create-post", draft).source == (
            "policy:PostPolicy.create_post"
        )
        assert gate().allows_sync(user, "update-post", draft)


def test_authorize_on_an_unsaved_object_inside_a_tenant_follows_the_policy(
    user: Any, other_user: Any
) -> None:
    request = RequestFactory().post("/posts")
    request.user = other_user
    with as_tenant(A):
        assert authorize_sync(request, "create-post", BlogPost(title="t", author=user))
        with pytest.raises(ForbiddenException):
            authorize_sync(request, "update-post", BlogPost(title="t", author=user))


def test_an_undefined_ability_on_an_unsaved_object_raises_keyerror_not_403(user: Any) -> None:
    with as_tenant(A), pytest.raises(KeyError):
        gate().allows_sync(user, "no-such-ability", BlogPost(title="t", author=user))


def test_an_unsaved_object_made_for_another_tenant_is_still_denied(user: Any) -> None:
    with as_tenant(A):
        assert (
            tenant_guard(user, "update-post", BlogPost(title="t", author=user, tenant_id=B))
            is False
        )


# -- superusers: Django's has_perm shortcut and authorize() -------------------------------------------------
def test_superuser_has_perm_on_another_tenants_object_is_true_through_djangos_shortcut(
    superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    """Documented: ``PermissionsMixin.has_perm`` answers True for an active superuser
    before any backend (the Gate included) is asked, so it is not tenant-safe."""
    with as_tenant(A):
        assert superuser.has_perm("delete-post", blog_posts["b_post"])
        assert superuser.has_perm("any-ability", blog_posts["b_post"])


def superuser_request(superuser: Any) -> HttpRequest:
    request = RequestFactory().delete("/posts/1")
    request.user = superuser
    return request


def test_authorize_denies_a_superuser_an_ability_on_another_tenants_object(
    superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    superuser.assign_role("editor")  # the policy would let them delete any post
    request = superuser_request(superuser)
    with as_tenant(A):
        with pytest.raises(ForbiddenException):
            authorize_sync(request, "delete-post", blog_posts["b_post"])
        assert authorize_sync(request, "delete-post", blog_posts["a_post"]) == superuser
    with as_tenant(B):
        assert authorize_sync(request, "delete-post", blog_posts["b_post"]) == superuser


def test_a_superusers_delete_of_another_tenants_post_is_404_and_deletes_nothing(
    demo_stack: None, client: Client, superuser: Any, blog_posts: dict[str, BlogPost]
) -> None:
    superuser.assign_role("editor")
    login_client(client, superuser)
    assert client.get("/").status_code == 200  # sets the CSRF cookie
    token = client.cookies["csrf_token"].value
    foreign = blog_posts["b_post"]
    response = client.delete(f"/posts/{foreign.pk}", HTTP_X_CSRF_TOKEN=token, **JSON)
    assert response.status_code == 404
    assert "Globex secret plan" not in response.content.decode()
    assert BlogPost.unscoped.filter(pk=foreign.pk).exists()
    own = client.delete(f"/posts/{blog_posts['a_post'].pk}", HTTP_X_CSRF_TOKEN=token, **JSON)
    assert own.status_code == 204
