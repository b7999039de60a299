"""Roles and permissions: HasRoles, Gate.role(), Gate.permission(), the ``roles``,
``permissions``, ``user_roles`` and ``role_permissions`` tables, and the query cost of
role checks."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from appframework.authorization import Gate, HasRoles, Permission, Role
from testproject.blog.models import User


def _role(name: str, *permissions: str) -> Role:
    role = Role.objects.create(name=name)
    role.permissions.add(*[Permission.objects.get_or_create(name=p)[0] for p in permissions])
    return role


@pytest.fixture
def staffer(db: Any, password: str) -> User:
    """A user holding "writer" (posts.create, posts.update) and "reviewer" (posts.publish)."""
    user = User.objects.create_user("dave@example.com", password)
    user.roles.add(
        _role("writer", "posts.create", "posts.update"), _role("reviewer", "posts.publish")
    )
    _role("admin", "users.manage")  # exists, not held
    return User.objects.get(pk=user.pk)


# -- HasRoles helpers -------------------------------------------------------------------------
@pytest.mark.django_db
class TestHasRolesSync:
    def test_user_model_uses_the_mixin(self) -> None:
        assert issubclass(User, HasRoles)

    def test_has_role(self, staffer: User) -> None:
        assert staffer.has_role("writer") is True
        assert staffer.has_role("reviewer") is True
        assert staffer.has_role("admin") is False
        assert staffer.has_role("nobody") is False

    def test_has_any_role(self, staffer: User) -> None:
        assert staffer.has_any_role("admin", "writer") is True
        assert staffer.has_any_role("admin", "nobody") is False
        assert staffer.has_any_role() is False

    def test_has_all_roles(self, staffer: User) -> None:
        assert staffer.has_all_roles("writer", "reviewer") is True
        assert staffer.has_all_roles("writer", "admin") is False

    def test_has_permission_from_any_of_several_roles(self, staffer: User) -> None:
        assert staffer.has_permission("posts.create") is True  # from writer
        assert staffer.has_permission("posts.update") is True  # from writer
        assert staffer.has_permission("posts.publish") is True  # from reviewer
        assert staffer.has_permission("users.manage") is False  # role not held
        assert staffer.has_permission("writer") is False  # a role name is not a permission

    def test_role_and_permission_names(self, staffer: User) -> None:
        assert staffer.role_names() == {"writer", "reviewer"}
        assert staffer.permission_names() == {"posts.create", "posts.update", "posts.publish"}

    def test_user_without_roles(self, user: Any) -> None:
        assert user.has_role("writer") is False
        assert user.has_any_role("writer") is False
        assert user.has_all_roles("writer") is False
        assert user.has_permission("posts.create") is False

    def test_unsaved_user_has_no_roles(self) -> None:
        unsaved = User(email="x@example.com")
        assert unsaved.has_role("writer") is False
        assert unsaved.has_permission("posts.create") is False


@pytest.mark.django_db(transaction=True)
class TestHasRolesAsync:
    async def test_async_twins_answer_without_synchronous_only_operation(
        self, staffer: User
    ) -> None:
        fresh = await User.objects.aget(pk=staffer.pk)  # nothing loaded yet
        assert await fresh.ahas_role("writer") is True
        assert await fresh.ahas_role("admin") is False
        assert await fresh.ahas_any_role("admin", "reviewer") is True
        assert await fresh.ahas_any_role("admin", "nobody") is False
        assert await fresh.ahas_all_roles("writer", "reviewer") is True
        assert await fresh.ahas_all_roles("writer", "admin") is False
        assert await fresh.ahas_permission("posts.publish") is True
        assert await fresh.ahas_permission("users.manage") is False

    async def test_each_async_twin_on_a_fresh_user_loads_on_its_own(self, staffer: User) -> None:
        # Each twin as the first call on an unloaded instance (no earlier call warms it).
        assert await (await User.objects.aget(pk=staffer.pk)).ahas_any_role("reviewer") is True
        assert await (await User.objects.aget(pk=staffer.pk)).ahas_all_roles("writer") is True
        assert (
            await (await User.objects.aget(pk=staffer.pk)).ahas_permission("posts.create") is True
        )

    async def test_async_role_added_after_load_is_seen(self, staffer: User) -> None:
        fresh = await User.objects.aget(pk=staffer.pk)
        assert await fresh.ahas_role("admin") is False
        await fresh.roles.aadd(await Role.objects.aget(name="admin"))
        assert await fresh.ahas_role("admin") is True
        assert await fresh.ahas_permission("users.manage") is True


# -- Gate.role / Gate.permission as checks --------------------------------------------------
@pytest.fixture
def role_gate() -> Gate:
    gate = Gate()
    gate.define("review", Gate.role("reviewer", "admin"))
    gate.define("manage", Gate.role("admin"))
    gate.define("publish", Gate.permission("posts.publish"))
    gate.define("manage-users", Gate.permission("users.manage"))
    return gate


@pytest.mark.django_db
class TestGateRoleAndPermissionSync:
    def test_role_check_in_allows_sync(self, role_gate: Gate, staffer: User) -> None:
        assert role_gate.allows_sync(staffer, "review") is True
        assert role_gate.allows_sync(staffer, "manage") is False

    def test_permission_check_in_allows_sync(self, role_gate: Gate, staffer: User) -> None:
        assert role_gate.allows_sync(staffer, "publish") is True
        assert role_gate.allows_sync(staffer, "manage-users") is False

    def test_role_and_permission_checks_ignore_extra_arguments(
        self, role_gate: Gate, staffer: User
    ) -> None:
        assert role_gate.allows_sync(staffer, "publish", object(), 3) is True

    def test_checks_deny_users_without_the_mixin(self, role_gate: Gate) -> None:
        from django.contrib.auth.models import AnonymousUser

        assert role_gate.allows_sync(AnonymousUser(), "review") is False
        assert role_gate.allows_sync(AnonymousUser(), "publish") is False
        assert role_gate.allows_sync(None, "publish") is False

    def test_role_check_needs_a_name(self) -> None:
        with pytest.raises(ValueError):
            Gate.role()

    def test_global_before_hook_applies_to_role_checks(
        self, role_gate: Gate, staffer: User
    ) -> None:
        role_gate.before(lambda user, ability, *args: False)
        assert role_gate.allows_sync(staffer, "review") is False
        assert staffer.has_role("reviewer") is True  # the raw data check bypasses hooks


@pytest.mark.django_db(transaction=True)
class TestGateRoleAndPermissionAsync:
    async def test_role_check_under_await_allows(self, role_gate: Gate, staffer: User) -> None:
        fresh = await User.objects.aget(pk=staffer.pk)
        assert await role_gate.allows(fresh, "review") is True
        assert await role_gate.allows(fresh, "manage") is False

    async def test_permission_check_under_await_allows(
        self, role_gate: Gate, staffer: User
    ) -> None:
        fresh = await User.objects.aget(pk=staffer.pk)
        assert await role_gate.allows(fresh, "publish") is True
        assert await role_gate.allows(fresh, "manage-users") is False

    async def test_role_and_permission_checks_have_an_async_path_that_caches(
        self, role_gate: Gate, staffer: User
    ) -> None:
        # The role check has an async path (acall → ahas_any_role): it must not raise
        # SynchronousOnlyOperation, and the loaded roles are cached on the instance.
        fresh = await User.objects.aget(pk=staffer.pk)
        assert await Gate.role("writer").acall(fresh) is True  # type: ignore[attr-defined]
        assert await Gate.permission("posts.update").acall(fresh) is True  # type: ignore[attr-defined]
        assert fresh.role_names() == {"writer", "reviewer"}  # from the cache: no query, sync OK

    async def test_demo_publish_post_ability_under_await_allows(
        self, staffer: User, user: Any
    ) -> None:
        from testproject.blog.policies import register

        gate = Gate()
        register(gate)
        fresh = await User.objects.aget(pk=staffer.pk)
        assert await gate.allows(fresh, "publish-post") is True  # posts.publish via reviewer
        plain = await User.objects.aget(pk=user.pk)
        assert await gate.allows(plain, "publish-post") is False


# -- assignment after the user exists ------------------------------------------------------
@pytest.mark.django_db
class TestAssignmentAfterCreation:
    def test_assign_role_after_user_exists_is_seen(self, user: Any) -> None:
        assert user.has_role("editor") is False  # loads (and caches) the empty role set
        user.assign_role("editor")
        assert user.has_role("editor") is True
        assert Role.objects.filter(name="editor").count() == 1
        assert User.objects.get(pk=user.pk).has_role("editor") is True

    def test_assign_role_accepts_role_objects_and_reuses_existing_names(
        self, user: Any, editor_role: Role
    ) -> None:
        user.assign_role(editor_role, "editor", "writer")
        assert user.role_names() == {"editor", "writer"}
        assert Role.objects.filter(name="editor").count() == 1

    def test_roles_add_after_user_exists_is_seen(self, user: Any) -> None:
        role = _role("writer", "posts.create")
        assert user.has_permission("posts.create") is False
        user.roles.add(role)
        assert user.has_role("writer") is True
        assert user.has_permission("posts.create") is True

    def test_remove_role_set_and_clear_are_seen(self, staffer: User) -> None:
        assert staffer.has_role("writer") is True
        staffer.remove_role("writer", "not-a-role")
        assert staffer.has_role("writer") is False
        staffer.roles.set([Role.objects.get(name="admin")])
        assert staffer.role_names() == {"admin"}
        staffer.roles.clear()
        assert staffer.role_names() == frozenset()

    def test_user_created_then_assigned_in_one_flow(self, db: Any, password: str) -> None:
        user = User.objects.create_user("eve@example.com", password)
        user.assign_role("writer")
        assert user.has_role("writer") is True

    def test_flush_roles_reloads_after_a_change_made_elsewhere(self, user: Any) -> None:
        role = Role.objects.create(name="writer")
        assert user.has_role("writer") is False
        role.users.add(user)  # changed from the role side: this instance is not told
        user.flush_roles()
        assert user.has_role("writer") is True


# -- tables and columns ---------------------------------------------------------------------
class TestSchema:
    def test_table_names(self) -> None:
        assert Role._meta.db_table == "roles"
        assert Permission._meta.db_table == "permissions"
        assert (
            Role._meta.get_field("permissions").remote_field.through._meta.db_table
            == "role_permissions"
        )
        assert User._meta.get_field("roles").remote_field.through._meta.db_table == "user_roles"

    def test_through_table_columns(self) -> None:
        user_roles = User._meta.get_field("roles").remote_field.through
        assert {f.column for f in user_roles._meta.concrete_fields} >= {"user_id", "role_id"}
        role_permissions = Role._meta.get_field("permissions").remote_field.through
        assert {f.column for f in role_permissions._meta.concrete_fields} >= {
            "role_id",
            "permission_id",
        }
        # one row per pair
        assert user_roles._meta.unique_together == (("user", "role"),)
        assert role_permissions._meta.unique_together == (("role", "permission"),)

    def test_field_shapes(self) -> None:
        role_name = Role._meta.get_field("name")
        assert role_name.max_length == 50 and role_name.unique
        permission_name = Permission._meta.get_field("name")
        assert permission_name.max_length == 100 and permission_name.unique

    @pytest.mark.django_db
    def test_tables_exist_in_the_database(self) -> None:
        tables = set(connection.introspection.table_names())
        assert {"roles", "permissions", "role_permissions", "user_roles"} <= tables

    @pytest.mark.django_db
    def test_duplicate_role_name_is_an_integrity_error(self) -> None:
        Role.objects.create(name="editor")
        with pytest.raises(IntegrityError), transaction.atomic():
            Role.objects.create(name="editor")

    @pytest.mark.django_db
    def test_duplicate_permission_name_is_an_integrity_error(self) -> None:
        Permission.objects.create(name="posts.publish")
        with pytest.raises(IntegrityError), transaction.atomic():
            Permission.objects.create(name="posts.publish")

    @pytest.mark.django_db
    def test_name_lengths_are_validated(self) -> None:
        Role(name="r" * 50).full_clean()
        with pytest.raises(ValidationError):
            Role(name="r" * 51).full_clean()
        Permission(name="p" * 100).full_clean()
        with pytest.raises(ValidationError):
            Permission(name="p" * 101).full_clean()

    @pytest.mark.django_db
    def test_assigning_the_same_role_twice_keeps_one_row(
        self, user: Any, editor_role: Role
    ) -> None:
        user.roles.add(editor_role)
        user.roles.add(editor_role)
        user_roles = User._meta.get_field("roles").remote_field.through
        assert user_roles.objects.filter(user=user).count() == 1


# -- query cost ------------------------------------------------------------------------------
@pytest.fixture
def heavy_user(db: Any, password: str) -> User:
    """10 roles x 10 permissions each (100 distinct permissions), re-fetched."""
    user = User.objects.create_user("heavy@example.com", password)
    for r in range(10):
        user.roles.add(_role(f"role-{r}", *[f"perm-{r}-{p}" for p in range(10)]))
    return User.objects.get(pk=user.pk)


@pytest.mark.django_db
class TestQueryCount:
    @pytest.mark.parametrize("calls", [1, 100])
    def test_has_permission_costs_two_queries_however_often_called(
        self, heavy_user: User, calls: int
    ) -> None:
        with CaptureQueriesContext(connection) as captured:
            for i in range(calls):
                assert heavy_user.has_permission(f"perm-{i % 10}-{(i // 10) % 10}") is True
            assert heavy_user.has_permission("perm-missing") is False
        assert len(captured) == 2, [q["sql"] for q in captured.captured_queries]

    @pytest.mark.parametrize("calls", [1, 100])
    def test_has_role_checks_cost_two_queries_however_often_called(
        self, heavy_user: User, calls: int
    ) -> None:
        with CaptureQueriesContext(connection) as captured:
            for i in range(calls):
                assert heavy_user.has_role(f"role-{i % 10}") is True
                assert heavy_user.has_any_role("nope", f"role-{i % 10}") is True
                assert heavy_user.has_all_roles("role-0", "role-9") is True
        assert len(captured) == 2, [q["sql"] for q in captured.captured_queries]

    @pytest.mark.parametrize("calls", [1, 100])
    def test_gate_role_and_permission_checks_cost_two_queries(
        self, heavy_user: User, calls: int
    ) -> None:
        gate = Gate()
        gate.define("r", Gate.role("role-3"))
        gate.define("p", Gate.permission("perm-7-7"))
        with CaptureQueriesContext(connection) as captured:
            for _ in range(calls):
                assert gate.allows_sync(heavy_user, "r") is True
                assert gate.allows_sync(heavy_user, "p") is True
        assert len(captured) == 2

    def test_heavy_user_sees_all_hundred_permissions(self, heavy_user: User) -> None:
        assert len(heavy_user.permission_names()) == 100
        assert len(heavy_user.role_names()) == 10
