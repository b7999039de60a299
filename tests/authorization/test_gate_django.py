"""Django integration: ``GateBackend`` in AUTHENTICATION_BACKENDS (testproject settings).

The backend answers ``has_perm`` only for abilities the Gate owns and returns False for
any other name, so Django's ``app.codename`` permissions, ``{{ perms }}`` and the admin
keep working.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.context_processors import PermWrapper
from django.contrib.auth.models import AnonymousUser, Group
from django.contrib.auth.models import Permission as DjangoPermission
from django.test import Client, override_settings

from appframework.authorization import Gate, GateBackend
from appframework.authorization.checks import check_backend
from appframework.container import container
from testproject.blog.models import Post, User
from tests.conftest import login_client

from .conftest import recording_evaluations


def _django_permission(codename: str = "change_post") -> DjangoPermission:
    return DjangoPermission.objects.get(content_type__app_label="blog", codename=codename)


@pytest.fixture
def evaluations() -> Iterator[list[dict[str, Any]]]:
    """Records gate_evaluated sent by the container's Gate."""
    with recording_evaluations(container.resolve(Gate)) as seen:
        yield seen


class TestBackendInstalled:
    def test_gate_backend_is_in_testproject_settings(self) -> None:
        assert "appframework.authorization.GateBackend" in settings.AUTHENTICATION_BACKENDS

    def test_no_w010_warning_with_the_backend_installed(self) -> None:
        assert check_backend() == []

    @override_settings(AUTHENTICATION_BACKENDS=["appframework.auth.AuthManager"])
    def test_w010_warning_without_the_backend(self) -> None:
        messages = check_backend()
        assert [m.id for m in messages] == ["appframework.W010"]

    def test_gate_backend_is_a_base_backend_with_async_twins(self) -> None:
        from django.contrib.auth.backends import BaseBackend

        assert issubclass(GateBackend, BaseBackend)
        assert "ahas_perm" in GateBackend.__dict__


# -- Django's own permissions keep working ---------------------------------------------------
@pytest.mark.django_db
class TestDjangoPermissionsStillWork:
    def test_granted_django_permission_is_true(self, user: Any) -> None:
        user.user_permissions.add(_django_permission())
        fresh = User.objects.get(pk=user.pk)  # ModelBackend caches permissions per instance
        assert fresh.has_perm("blog.change_post") is True

    def test_ungranted_django_permission_is_false_not_key_error(self, user: Any) -> None:
        assert user.has_perm("blog.change_post") is False
        assert user.has_perm("blog.delete_post") is False

    def test_django_permission_with_an_object_is_false_not_key_error(
        self, user: Any, post: Any
    ) -> None:
        user.user_permissions.add(_django_permission())
        fresh = User.objects.get(pk=user.pk)
        # ModelBackend has no object permissions; the Gate does not own the name.
        assert fresh.has_perm("blog.change_post", post) is False

    def test_group_permission_is_true(self, user: Any) -> None:
        group = Group.objects.create(name="staff")
        group.permissions.add(_django_permission("delete_post"))
        user.groups.add(group)
        assert User.objects.get(pk=user.pk).has_perm("blog.delete_post") is True

    def test_has_perms_and_module_perms(self, user: Any) -> None:
        user.user_permissions.add(_django_permission(), _django_permission("add_post"))
        fresh = User.objects.get(pk=user.pk)
        assert fresh.has_perms(["blog.change_post", "blog.add_post"]) is True
        assert fresh.has_module_perms("blog") is True
        assert User.objects.get(pk=user.pk).has_module_perms("appframework_authorization") is False

    def test_perms_template_wrapper(self, user: Any) -> None:
        user.user_permissions.add(_django_permission())
        perms = PermWrapper(User.objects.get(pk=user.pk))
        assert "blog.change_post" in perms
        assert bool(perms["blog"]["change_post"]) is True
        assert bool(perms["blog"]["delete_post"]) is False


# -- has_perm reaches the Gate for its abilities ---------------------------------------------
@pytest.mark.django_db
class TestHasPermReachesGate:
    def test_has_perm_with_post_reaches_the_gate(
        self, user: Any, other_user: Any, post: Any, evaluations: list[dict[str, Any]]
    ) -> None:
        assert user.has_perm("delete-post", post) is True
        assert other_user.has_perm("delete-post", post) is False
        assert [
            (e["user"], e["ability"], e["arguments"], e["allowed"], e["source"])
            for e in evaluations
        ] == [
            (user, "delete-post", (post,), True, "policy:PostPolicy.delete_post"),
            (other_user, "delete-post", (post,), False, "policy:PostPolicy.delete_post"),
        ]

    def test_has_perm_editor_role_through_gate(self, editor: Any, post: Any) -> None:
        assert editor.has_perm("delete-post", post) is True
        assert editor.has_perm("update-post", post) is False  # update is author-only

    def test_has_perm_with_a_class_object(self, user: Any) -> None:
        assert user.has_perm("create-post", Post) is True

    def test_has_perm_for_a_defined_ability_without_object(
        self, user: Any, other_user: Any
    ) -> None:
        other_user.assign_role("moderator")
        assert other_user.has_perm("publish-post") is True
        assert user.has_perm("publish-post") is False

    def test_has_perm_tuple_object_carries_several_gate_arguments(
        self, user: Any, bound_gate: Gate
    ) -> None:
        seen: list[tuple[Any, ...]] = []
        bound_gate.define("transfer", lambda u, *args: seen.append(args) or True)
        assert user.has_perm("transfer", ("from", "to")) is True
        assert seen == [("from", "to")]

    def test_has_perm_unknown_ability_is_false(self, user: Any, post: Any) -> None:
        assert user.has_perm("no-such-ability") is False
        assert user.has_perm("no-such-ability", post) is False
        assert user.has_perm("no-such-ability", object()) is False

    def test_anonymous_and_inactive_users_are_denied(self, user: Any, post: Any) -> None:
        assert AnonymousUser().has_perm("delete-post", post) is False
        user.is_active = False
        assert user.has_perm("delete-post", post) is False

    def test_inactive_user_has_perm_is_false_even_for_a_role_based_ability(
        self, other_user: Any
    ) -> None:
        # Django documents (User.is_active) that has_perm() returns False for inactive
        # users, and asks custom backends to check is_active in their permission methods;
        # ModelBackend does. The demo's "publish-post" check has no is_active guard of its own.
        other_user.assign_role("moderator")
        assert other_user.has_perm("publish-post") is True
        other_user.is_active = False
        other_user.save()
        inactive = User.objects.get(pk=other_user.pk)
        assert inactive.has_role("moderator") is True  # the raw data is unchanged
        assert inactive.has_perm("publish-post") is False

    def test_superuser_short_circuit_never_reaches_the_gate(
        self, superuser: Any, post: Any, evaluations: list[dict[str, Any]]
    ) -> None:
        # Documented difference: Django answers True for superusers before any backend.
        assert superuser.has_perm("delete-post", post) is True
        assert superuser.has_perm("no-such-ability") is True
        assert evaluations == []
        assert container.resolve(Gate).allows_sync(superuser, "delete-post", post) is False


@pytest.mark.django_db(transaction=True)
class TestAhasPermReachesGate:
    async def test_ahas_perm_with_post_reaches_the_gate(
        self, user: Any, other_user: Any, post: Any, evaluations: list[dict[str, Any]]
    ) -> None:
        assert await user.ahas_perm("delete-post", post) is True
        assert await other_user.ahas_perm("delete-post", post) is False
        assert [(e["ability"], e["allowed"], e["source"]) for e in evaluations] == [
            ("delete-post", True, "policy:PostPolicy.delete_post"),
            ("delete-post", False, "policy:PostPolicy.delete_post"),
        ]

    async def test_ahas_perm_editor_role_query_under_async(self, editor: Any, post: Any) -> None:
        fresh = await User.objects.aget(pk=editor.pk)
        assert await fresh.ahas_perm("delete-post", post) is True

    async def test_inactive_user_ahas_perm_is_false_even_for_a_role_based_ability(
        self, other_user: Any
    ) -> None:
        from appframework.authorization import Role

        await other_user.roles.aadd(await Role.objects.acreate(name="moderator"))
        other_user.is_active = False
        await other_user.asave()
        inactive = await User.objects.aget(pk=other_user.pk)
        assert await inactive.ahas_perm("publish-post") is False

    async def test_ahas_perm_unknown_ability_is_false(self, user: Any, post: Any) -> None:
        assert await user.ahas_perm("no-such-ability", post) is False
        assert await user.ahas_perm("no-such-ability") is False

    async def test_ahas_perm_for_a_django_permission_still_works(self, user: Any) -> None:
        permission = await DjangoPermission.objects.aget(
            content_type__app_label="blog", codename="change_post"
        )
        await user.user_permissions.aadd(permission)
        fresh = await User.objects.aget(pk=user.pk)
        assert await fresh.ahas_perm("blog.change_post") is True
        assert await fresh.ahas_perm("blog.delete_post") is False


# -- the admin ---------------------------------------------------------------------------------
@pytest.mark.django_db
class TestAdmin:
    @pytest.fixture
    def admin_client(self, client: Client, superuser: Any) -> Client:
        from appframework.authorization import Permission, Role

        role = Role.objects.create(name="editor")
        role.permissions.add(Permission.objects.create(name="posts.delete"))
        return login_client(client, superuser)

    def test_admin_index_loads_for_staff_superuser(self, admin_client: Client) -> None:
        response = admin_client.get("/admin/")
        assert response.status_code == 200
        assert b"appframework_authorization/role/" in response.content

    def test_role_changelist_loads(self, admin_client: Client) -> None:
        response = admin_client.get("/admin/appframework_authorization/role/")
        assert response.status_code == 200
        assert b"editor" in response.content

    def test_permission_changelist_loads(self, admin_client: Client) -> None:
        response = admin_client.get("/admin/appframework_authorization/permission/")
        assert response.status_code == 200
        assert b"posts.delete" in response.content

    def test_role_add_and_change_pages_load(self, admin_client: Client) -> None:
        from appframework.authorization import Role

        assert admin_client.get("/admin/appframework_authorization/role/add/").status_code == 200
        role = Role.objects.get(name="editor")
        assert (
            admin_client.get(
                f"/admin/appframework_authorization/role/{role.pk}/change/"
            ).status_code
            == 200
        )

    def test_staff_user_with_a_django_view_permission_sees_the_changelist(
        self, client: Client, user: Any
    ) -> None:
        user.is_staff = True
        user.save()
        user.user_permissions.add(
            DjangoPermission.objects.get(
                content_type__app_label="appframework_authorization", codename="view_role"
            )
        )
        login_client(client, user)
        assert client.get("/admin/").status_code == 200
        assert client.get("/admin/appframework_authorization/role/").status_code == 200
        assert client.get("/admin/appframework_authorization/permission/").status_code == 403
