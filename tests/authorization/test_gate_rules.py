"""The Gate itself, on a fresh ``Gate()`` per test: bound empty, ``define``,
``policy``, a policy's ``before``, global ``before`` hooks, the lookup order, and
``KeyError`` for an ability nothing resolves.

Plain Python classes (``Thing``, ``Person``) stand in for models and users, so these
tests need no database, except where the rule is about the container or the ORM.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps

from appframework.authorization import Gate
from appframework.authorization.apps import AuthorizationServiceProvider
from appframework.container import container

from .conftest import Person, SpecialThing, Thing


# -- the Gate is bound empty by AuthorizationServiceProvider --------------------------------
class TestBoundEmpty:
    def test_container_resolves_one_shared_gate_instance(self) -> None:
        gate = container.resolve(Gate)
        assert isinstance(gate, Gate)
        assert container.resolve(Gate) is gate

    def test_authorization_service_provider_binds_a_new_empty_gate(self) -> None:
        config = apps.get_app_config("appframework_authorization")
        assert isinstance(config, AuthorizationServiceProvider)
        shared = container.resolve(Gate)
        try:
            config.ready()
            bound = container.resolve(Gate)
            assert isinstance(bound, Gate)
            assert bound is not shared
            # Empty: the demo's abilities (registered by BlogConfig.ready) are not there.
            with pytest.raises(KeyError):
                bound.allows_sync(Person(), "publish-post")
        finally:
            container.bind(Gate, shared)
        assert container.resolve(Gate) is shared

    def test_fresh_gate_knows_no_ability(self, gate: Gate, person: Person) -> None:
        for ability in ("delete-post", "publish-post", "anything"):
            assert not gate.has(ability, Thing())
            with pytest.raises(KeyError):
                gate.allows_sync(person, ability)
            with pytest.raises(KeyError):
                gate.allows_sync(person, ability, Thing())

    async def test_fresh_gate_async_allows_raises_key_error(
        self, gate: Gate, person: Person
    ) -> None:
        with pytest.raises(KeyError):
            await gate.allows(person, "anything", Thing())


# -- define(ability, check), check sync or async, truthy/falsy ------------------------------
class TestDefine:
    def test_sync_check_decides(self, gate: Gate) -> None:
        gate.define("edit-thing", lambda user, thing: thing.owner_id == user.pk)
        assert gate.allows_sync(Person(1), "edit-thing", Thing(owner_id=1)) is True
        assert gate.allows_sync(Person(2), "edit-thing", Thing(owner_id=1)) is False

    async def test_sync_check_under_async_allows(self, gate: Gate) -> None:
        gate.define("edit-thing", lambda user, thing: thing.owner_id == user.pk)
        assert await gate.allows(Person(1), "edit-thing", Thing(owner_id=1)) is True
        assert await gate.allows(Person(2), "edit-thing", Thing(owner_id=1)) is False

    async def test_async_check_under_async_allows(self, gate: Gate) -> None:
        async def check(user: Any, thing: Thing) -> bool:
            return thing.owner_id == user.pk

        gate.define("edit-thing", check)
        assert await gate.allows(Person(1), "edit-thing", Thing(owner_id=1)) is True
        assert await gate.allows(Person(2), "edit-thing", Thing(owner_id=1)) is False

    def test_async_check_under_allows_sync(self, gate: Gate) -> None:
        async def check(user: Any, thing: Thing) -> bool:
            return thing.owner_id == user.pk

        gate.define("edit-thing", check)
        assert gate.allows_sync(Person(1), "edit-thing", Thing(owner_id=1)) is True
        assert gate.allows_sync(Person(2), "edit-thing", Thing(owner_id=1)) is False

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (1, True),
            ("yes", True),
            ([0], True),
            (object(), True),
            (0, False),
            ("", False),
            ([], False),
            (None, False),
        ],
    )
    def test_truthy_and_falsy_results_are_coerced_to_bool(
        self, gate: Gate, value: Any, expected: bool
    ) -> None:
        gate.define("sync-ability", lambda user: value)

        async def acheck(user: Any) -> Any:
            return value

        gate.define("async-ability", acheck)
        assert gate.allows_sync(Person(), "sync-ability") is expected
        assert gate.allows_sync(Person(), "async-ability") is expected

    async def test_truthy_and_falsy_async_results_are_coerced_to_bool(self, gate: Gate) -> None:
        async def many(user: Any) -> Any:
            return ["x"]

        async def empty(user: Any) -> Any:
            return {}

        gate.define("many", many)
        gate.define("empty", empty)
        assert await gate.allows(Person(), "many") is True
        assert await gate.allows(Person(), "empty") is False

    def test_extra_arguments_are_passed_through_in_order(self, gate: Gate) -> None:
        seen: list[tuple[Any, ...]] = []

        def check(user: Any, *args: Any) -> bool:
            seen.append((user, *args))
            return True

        gate.define("transfer", check)
        user, post, source, target = Person(), Thing(), "folder-a", "folder-b"
        assert gate.allows_sync(user, "transfer", post, source, target) is True
        assert seen == [(user, post, source, target)]
        # a check taking only the user gets only the user
        gate.define("no-args", lambda u: u is user)
        assert gate.allows_sync(user, "no-args") is True

    async def test_extra_arguments_are_passed_through_to_async_check(self, gate: Gate) -> None:
        seen: list[tuple[Any, ...]] = []

        async def check(user: Any, *args: Any) -> bool:
            seen.append((user, *args))
            return True

        gate.define("transfer", check)
        user, thing = Person(), Thing()
        assert await gate.allows(user, "transfer", thing, 3, "x") is True
        assert seen == [(user, thing, 3, "x")]

    def test_define_replaces_an_earlier_check(self, gate: Gate) -> None:
        gate.define("x", lambda user: False)
        gate.define("x", lambda user: True)
        assert gate.allows_sync(Person(), "x") is True

    def test_define_rejects_non_callable_and_empty_names(self, gate: Gate) -> None:
        with pytest.raises(TypeError):
            gate.define("x", True)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            gate.define("", lambda user: True)


# -- policy(model, policy) -----------------------------------------------------------------
class CountingPolicy:
    instances = 0

    def __init__(self) -> None:
        type(self).instances += 1

    def update_thing(self, user: Any, thing: Thing) -> bool:
        return thing.owner_id == user.pk


class RecordingPolicy:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, tuple[Any, ...]]] = []

    def update_thing(self, user: Any, *args: Any) -> bool:
        self.calls.append(("update_thing", self, args))
        return True

    def create_thing(self, user: Any, *args: Any) -> bool:
        self.calls.append(("create_thing", self, args))
        return True


class TestPolicy:
    def test_policy_class_is_instantiated_exactly_once(self, gate: Gate) -> None:
        CountingPolicy.instances = 0
        gate.policy(Thing, CountingPolicy)
        assert CountingPolicy.instances == 1
        for i in range(50):
            gate.allows_sync(Person(i), "update-thing", Thing(owner_id=1))
        assert CountingPolicy.instances == 1
        assert isinstance(gate.policy_for(Thing), CountingPolicy)
        assert gate.policy_for(Thing()) is gate.policy_for(SpecialThing)

    async def test_policy_class_is_instantiated_once_under_async_allows(self, gate: Gate) -> None:
        CountingPolicy.instances = 0
        gate.policy(Thing, CountingPolicy)
        for i in range(50):
            await gate.allows(Person(i), "update-thing", Thing(owner_id=1))
        assert CountingPolicy.instances == 1

    def test_policy_instance_is_used_as_given(self, gate: Gate) -> None:
        policy = RecordingPolicy()
        gate.policy(Thing, policy)
        assert gate.policy_for(Thing) is policy
        thing = Thing()
        assert gate.allows_sync(Person(), "update-thing", thing) is True
        assert policy.calls == [("update_thing", policy, (thing,))]

    def test_undefined_ability_falls_back_to_policy_of_first_argument_type(
        self, gate: Gate
    ) -> None:
        gate.define("something-else", lambda user: False)
        gate.policy(Thing, CountingPolicy)
        assert gate.allows_sync(Person(1), "update-thing", Thing(owner_id=1)) is True
        assert gate.allows_sync(Person(2), "update-thing", Thing(owner_id=1)) is False

    def test_policy_is_chosen_by_type_of_first_argument_only(self, gate: Gate) -> None:
        class Other:
            pass

        gate.policy(Thing, RecordingPolicy)
        # Thing in second position does not select the policy.
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "update-thing", Other(), Thing())

    def test_class_first_argument_selects_policy_and_is_not_passed(self, gate: Gate) -> None:
        policy = RecordingPolicy()
        gate.policy(Thing, policy)
        assert gate.allows_sync(Person(), "create-thing", Thing) is True
        assert policy.calls == [("create_thing", policy, ())]

    def test_class_first_argument_passes_the_remaining_arguments(self, gate: Gate) -> None:
        policy = RecordingPolicy()
        gate.policy(Thing, policy)
        assert gate.allows_sync(Person(), "create-thing", Thing, "category", 7) is True
        assert policy.calls == [("create_thing", policy, ("category", 7))]

    def test_demo_create_post_with_post_class_gets_only_the_user(self, gate: Gate) -> None:
        from testproject.blog.models import Post
        from testproject.blog.policies import PostPolicy

        received: list[tuple[Any, ...]] = []

        class Spy(PostPolicy):
            def create_post(self, *args: Any) -> bool:  # type: ignore[override]
                received.append(args)
                return super().create_post(*args)

        gate.policy(Post, Spy)
        user = Person()
        assert gate.allows_sync(user, "create-post", Post) is True
        assert received == [(user,)]

    async def test_class_first_argument_is_not_passed_under_async_allows(self, gate: Gate) -> None:
        policy = RecordingPolicy()
        gate.policy(Thing, policy)
        assert await gate.allows(Person(), "create-thing", Thing) is True
        assert policy.calls == [("create_thing", policy, ())]

    def test_subclass_instance_finds_parent_policy(self, gate: Gate) -> None:
        gate.policy(Thing, CountingPolicy)
        assert gate.allows_sync(Person(1), "update-thing", SpecialThing(owner_id=1)) is True
        assert gate.allows_sync(Person(2), "update-thing", SpecialThing(owner_id=1)) is False

    def test_subclass_class_argument_finds_parent_policy(self, gate: Gate) -> None:
        policy = RecordingPolicy()
        gate.policy(Thing, policy)
        assert gate.allows_sync(Person(), "create-thing", SpecialThing) is True
        assert policy.calls == [("create_thing", policy, ())]

    def test_subclass_policy_takes_precedence_over_parent_policy(self, gate: Gate) -> None:
        class Deny:
            def update_thing(self, user: Any, thing: Any) -> bool:
                return False

        gate.policy(Thing, RecordingPolicy)
        gate.policy(SpecialThing, Deny)
        assert gate.allows_sync(Person(), "update-thing", Thing()) is True
        assert gate.allows_sync(Person(), "update-thing", SpecialThing()) is False

    def test_async_policy_method(self, gate: Gate) -> None:
        class AsyncPolicy:
            async def update_thing(self, user: Any, thing: Thing) -> bool:
                return thing.owner_id == user.pk

        gate.policy(Thing, AsyncPolicy)
        assert gate.allows_sync(Person(1), "update-thing", Thing(owner_id=1)) is True
        assert gate.allows_sync(Person(1), "update-thing", Thing(owner_id=2)) is False

    async def test_async_policy_method_under_async_allows(self, gate: Gate) -> None:
        class AsyncPolicy:
            async def update_thing(self, user: Any, thing: Thing) -> bool:
                return thing.owner_id == user.pk

        gate.policy(Thing, AsyncPolicy)
        assert await gate.allows(Person(1), "update-thing", Thing(owner_id=1)) is True
        assert await gate.allows(Person(1), "update-thing", Thing(owner_id=2)) is False

    def test_dotted_and_dashed_ability_names_map_to_underscored_methods(self, gate: Gate) -> None:
        class P:
            def publish_thing_now(self, user: Any, thing: Any) -> bool:
                return True

        gate.policy(Thing, P)
        assert gate.allows_sync(Person(), "publish-thing.now", Thing()) is True

    def test_policy_needs_a_model_class(self, gate: Gate) -> None:
        with pytest.raises(TypeError):
            gate.policy(Thing(), CountingPolicy)  # type: ignore[arg-type]


# -- policy before(user, ability) -----------------------------------------------------------
def _policy_with_before(result: Any, method_result: bool, log: list[Any]) -> type:
    class P:
        def before(self, user: Any, ability: str) -> Any:
            log.append(("before", user, ability))
            return result

        def update_thing(self, user: Any, thing: Any) -> bool:
            log.append(("method", user, thing))
            return method_result

    return P


class TestPolicyBefore:
    def test_policy_before_true_decides_and_method_is_not_called(self, gate: Gate) -> None:
        log: list[Any] = []
        gate.policy(Thing, _policy_with_before(True, False, log))
        user = Person()
        assert gate.allows_sync(user, "update-thing", Thing()) is True
        assert log == [("before", user, "update-thing")]

    def test_policy_before_false_decides_and_method_is_not_called(self, gate: Gate) -> None:
        log: list[Any] = []
        gate.policy(Thing, _policy_with_before(False, True, log))
        user = Person()
        assert gate.allows_sync(user, "update-thing", Thing()) is False
        assert log == [("before", user, "update-thing")]

    def test_policy_before_none_falls_through_to_method(self, gate: Gate) -> None:
        log: list[Any] = []
        gate.policy(Thing, _policy_with_before(None, True, log))
        user, thing = Person(), Thing()
        assert gate.allows_sync(user, "update-thing", thing) is True
        assert log == [("before", user, "update-thing"), ("method", user, thing)]

    def test_policy_before_truthy_non_bool_decides_as_bool(self, gate: Gate) -> None:
        log: list[Any] = []
        gate.policy(Thing, _policy_with_before(0, True, log))  # 0 is not None: it decides
        assert gate.allows_sync(Person(), "update-thing", Thing()) is False
        assert [entry[0] for entry in log] == ["before"]

    async def test_async_policy_before_decides_under_async_allows(self, gate: Gate) -> None:
        calls: list[str] = []

        class P:
            async def before(self, user: Any, ability: str) -> Any:
                calls.append("before")
                return None if user.is_active else False

            def update_thing(self, user: Any, thing: Any) -> bool:
                calls.append("method")
                return True

        gate.policy(Thing, P)
        assert await gate.allows(Person(is_active=False), "update-thing", Thing()) is False
        assert calls == ["before"]
        assert await gate.allows(Person(), "update-thing", Thing()) is True
        assert calls == ["before", "before", "method"]

    def test_demo_post_policy_before_denies_inactive_author(self) -> None:
        from testproject.blog.models import Post
        from testproject.blog.policies import register

        gate = Gate()
        register(gate)
        author = Person(5, is_active=False)
        assert gate.allows_sync(author, "update-post", Post(author_id=5)) is False
        assert gate.allows_sync(Person(5), "update-post", Post(author_id=5)) is True


# -- global Gate.before hooks ---------------------------------------------------------------
class TestGlobalBefore:
    def test_global_before_true_decides_over_a_denying_check(self, gate: Gate) -> None:
        called: list[str] = []
        gate.define("x", lambda user: called.append("check") or False)
        gate.before(lambda user, ability, *args: True)
        assert gate.allows_sync(Person(), "x") is True
        assert called == []

    def test_global_before_false_decides_over_an_allowing_check(self, gate: Gate) -> None:
        called: list[str] = []
        gate.define("x", lambda user: called.append("check") or True)
        gate.before(lambda user, ability, *args: False)
        assert gate.allows_sync(Person(), "x") is False
        assert called == []

    def test_global_before_none_defers_to_check(self, gate: Gate) -> None:
        gate.define("allow", lambda user: True)
        gate.define("deny", lambda user: False)
        gate.before(lambda user, ability, *args: None)
        assert gate.allows_sync(Person(), "allow") is True
        assert gate.allows_sync(Person(), "deny") is False

    def test_global_before_receives_user_ability_and_arguments(self, gate: Gate) -> None:
        seen: list[tuple[Any, ...]] = []

        def hook(user: Any, ability: str, *args: Any) -> None:
            seen.append((user, ability, *args))

        gate.before(hook)
        gate.define("move", lambda user, a, b: True)
        user, a = Person(), Thing()
        gate.allows_sync(user, "move", a, "b")
        assert seen == [(user, "move", a, "b")]

    def test_global_before_receives_class_argument_unchanged(self, gate: Gate) -> None:
        seen: list[tuple[Any, ...]] = []
        gate.before(lambda user, ability, *args: seen.append(args))
        gate.policy(Thing, RecordingPolicy)
        gate.allows_sync(Person(), "create-thing", Thing)
        assert seen == [(Thing,)]

    def test_first_non_none_hook_wins_and_later_hooks_are_not_called(self, gate: Gate) -> None:
        order: list[str] = []

        def first(user: Any, ability: str, *args: Any) -> None:
            order.append("first")

        def second(user: Any, ability: str, *args: Any) -> bool:
            order.append("second")
            return False

        def third(user: Any, ability: str, *args: Any) -> bool:
            order.append("third")
            return True

        for hook in (first, second, third):
            gate.before(hook)
        gate.define("x", lambda user: True)
        assert gate.allows_sync(Person(), "x") is False
        assert order == ["first", "second"]

    async def test_async_global_before_hook(self, gate: Gate) -> None:
        async def superuser(user: Any, ability: str, *args: Any) -> bool | None:
            return True if getattr(user, "is_superuser", False) else None

        gate.before(superuser)
        gate.define("x", lambda user: False)
        root = Person()
        root.is_superuser = True  # type: ignore[attr-defined]
        assert await gate.allows(root, "x") is True
        assert await gate.allows(Person(), "x") is False

    def test_async_global_before_hook_under_allows_sync(self, gate: Gate) -> None:
        async def deny_all(user: Any, ability: str, *args: Any) -> bool:
            return False

        gate.before(deny_all)
        gate.define("x", lambda user: True)
        assert gate.allows_sync(Person(), "x") is False

    def test_before_returns_the_hook_so_it_works_as_decorator(self, gate: Gate) -> None:
        @gate.before
        def hook(user: Any, ability: str, *args: Any) -> None:
            return None

        assert callable(hook)
        with pytest.raises(TypeError):
            gate.before("not callable")  # type: ignore[arg-type]

    def test_global_before_decides_even_an_ability_nothing_else_resolves(self, gate: Gate) -> None:
        gate.before(lambda user, ability, *args: False)
        assert gate.allows_sync(Person(), "never-defined") is False

    def test_global_before_none_for_unknown_ability_still_raises_key_error(
        self, gate: Gate
    ) -> None:
        gate.before(lambda user, ability, *args: None)
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "never-defined")


# -- lookup order before hooks -> define -> policy ------------------------------------------
class TestLookupOrder:
    def _ordered_gate(self, gate: Gate, order: list[str], *, define: bool) -> None:
        def hook(user: Any, ability: str, *args: Any) -> None:
            order.append("hook")

        class P:
            def before(self, user: Any, ability: str) -> None:
                order.append("policy.before")

            def update_thing(self, user: Any, thing: Any) -> bool:
                order.append("policy.method")
                return False

        gate.before(hook)
        gate.policy(Thing, P)
        if define:
            gate.define("update-thing", lambda user, thing: order.append("define") or True)

    def test_order_is_hooks_then_defined_check_and_policy_is_skipped(self, gate: Gate) -> None:
        order: list[str] = []
        self._ordered_gate(gate, order, define=True)
        assert gate.allows_sync(Person(), "update-thing", Thing()) is True
        assert order == ["hook", "define"]

    def test_order_without_define_is_hooks_then_policy_before_then_method(self, gate: Gate) -> None:
        order: list[str] = []
        self._ordered_gate(gate, order, define=False)
        assert gate.allows_sync(Person(), "update-thing", Thing()) is False
        assert order == ["hook", "policy.before", "policy.method"]

    async def test_order_is_the_same_under_async_allows(self, gate: Gate) -> None:
        order: list[str] = []
        self._ordered_gate(gate, order, define=True)
        assert await gate.allows(Person(), "update-thing", Thing()) is True
        assert order == ["hook", "define"]

    def test_defined_check_wins_over_policy_method_of_the_same_name(self, gate: Gate) -> None:
        from testproject.blog.models import Post
        from testproject.blog.policies import PostPolicy

        gate.policy(Post, PostPolicy)
        post = Post(author_id=1)
        assert gate.allows_sync(Person(2), "delete-post", post) is False  # not the author
        gate.define("delete-post", lambda user, post: True)
        assert gate.allows_sync(Person(2), "delete-post", post) is True
        assert gate.inspect_sync(Person(2), "delete-post", post).source == "define:delete-post"


# -- KeyError, no silent deny ---------------------------------------------------------------
class TestKeyErrorNoSilentDeny:
    def test_key_error_with_no_define_and_no_arguments(self, gate: Gate) -> None:
        with pytest.raises(KeyError) as info:
            gate.allows_sync(Person(), "fly")
        assert info.value.args == ("fly",)

    def test_key_error_when_first_argument_has_no_policy(self, gate: Gate) -> None:
        gate.policy(Thing, CountingPolicy)
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "update-thing", object())
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "update-thing", "a string")

    def test_key_error_when_policy_lacks_the_method(self, gate: Gate) -> None:
        gate.policy(Thing, CountingPolicy)
        with pytest.raises(KeyError) as info:
            gate.allows_sync(Person(), "delete-thing", Thing())
        assert info.value.args == ("delete-thing",)

    def test_key_error_when_policy_before_defers_and_method_is_missing(self, gate: Gate) -> None:
        log: list[Any] = []
        gate.policy(Thing, _policy_with_before(None, True, log))
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "archive-thing", Thing())

    def test_key_error_when_only_another_ability_is_defined(self, gate: Gate) -> None:
        gate.define("read", lambda user: True)
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "write")

    async def test_key_error_under_async_allows(self, gate: Gate) -> None:
        gate.policy(Thing, CountingPolicy)
        with pytest.raises(KeyError):
            await gate.allows(Person(), "delete-thing", Thing())
        with pytest.raises(KeyError):
            await gate.allows(Person(), "fly")
        with pytest.raises(KeyError):
            await gate.inspect(Person(), "fly")

    def test_key_error_from_inspect_sync(self, gate: Gate) -> None:
        with pytest.raises(KeyError):
            gate.inspect_sync(Person(), "fly")


# -- sync checks that touch the ORM under async allows ---------------------------------------
@pytest.mark.django_db(transaction=True)
class TestSyncOrmCheckUnderAsyncAllows:
    async def test_sync_check_reading_an_uncached_foreign_key_works_under_await_allows(
        self, gate: Gate, user: Any, other_user: Any
    ) -> None:
        from testproject.blog.models import Post

        created = await Post.objects.acreate(title="t", author=user)
        post = await Post.objects.aget(pk=created.pk)  # author not cached: a query is needed
        assert not Post.author.is_cached(post)
        gate.define("email-owner", lambda user, post: post.author.email == user.email)
        assert await gate.allows(user, "email-owner", post) is True
        fresh = await Post.objects.aget(pk=created.pk)
        assert await gate.allows(other_user, "email-owner", fresh) is False

    async def test_sync_policy_method_using_roles_works_under_await_allows(
        self, user: Any, other_user: Any
    ) -> None:
        from appframework.authorization import Role
        from testproject.blog.models import Post, User
        from testproject.blog.policies import register

        gate = Gate()
        register(gate)
        post = await Post.objects.acreate(title="t", author=user)
        other = await User.objects.aget(pk=other_user.pk)
        assert await gate.allows(other, "delete-post", post) is False
        role = await Role.objects.acreate(name="editor")
        await other.roles.aadd(role)
        other = await User.objects.aget(pk=other_user.pk)
        # PostPolicy.delete_post calls the sync user.has_role() (a query) for non-authors.
        assert await gate.allows(other, "delete-post", post) is True
