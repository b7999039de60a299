"""Beyond the yes/no Gate: ``Gate.inspect`` / ``Decision`` (which rule decided), the
``gate_evaluated`` signal, ``Gate.scope`` and ``testing.assert_scope_matches``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from appframework.authorization import Decision, Gate
from appframework.authorization.testing import assert_scope_matches
from appframework.container import container
from testproject.blog.models import Post
from testproject.blog.policies import PostPolicy, register

from .conftest import Person, Thing, recording_evaluations


@pytest.fixture
def demo_gate() -> Gate:
    """A fresh Gate with the demo's registrations (PostPolicy, publish-post)."""
    gate = Gate()
    register(gate)
    return gate


# -- inspect / Decision ------------------------------------------------------------------------
class TestInspect:
    def test_decision_is_a_frozen_value_whose_truth_is_allowed(self) -> None:
        yes, no = Decision(True, "define:x"), Decision(False, "define:x")
        assert bool(yes) is True and bool(no) is False
        assert yes == Decision(True, "define:x")
        with pytest.raises(dataclasses.FrozenInstanceError):
            yes.allowed = False  # type: ignore[misc]

    def test_source_names_the_defined_check(self, gate: Gate) -> None:
        gate.define("edit", lambda user: True)
        assert gate.inspect_sync(Person(), "edit") == Decision(True, "define:edit")

    def test_source_names_the_policy_method(self, demo_gate: Gate) -> None:
        decision = demo_gate.inspect_sync(Person(1), "delete-post", Post(author_id=1))
        assert decision == Decision(True, "policy:PostPolicy.delete_post")
        decision = demo_gate.inspect_sync(Person(2), "update-post", Post(author_id=1))
        assert decision == Decision(False, "policy:PostPolicy.update_post")

    def test_source_names_the_policy_before(self, demo_gate: Gate) -> None:
        decision = demo_gate.inspect_sync(
            Person(1, is_active=False), "delete-post", Post(author_id=1)
        )
        assert decision == Decision(False, "policy:PostPolicy.before")

    def test_source_names_the_global_before_hook(self, demo_gate: Gate) -> None:
        def superuser_hook(user: Any, ability: str, *args: Any) -> bool | None:
            return True if getattr(user, "is_superuser", False) else None

        demo_gate.before(superuser_hook)
        root = Person(9)
        root.is_superuser = True  # type: ignore[attr-defined]
        decision = demo_gate.inspect_sync(root, "delete-post", Post(author_id=1))
        assert decision.allowed is True
        assert decision.source == f"before:{__name__}.{superuser_hook.__qualname__}"
        assert decision.source.startswith("before:tests.authorization.test_inspect_scope.")
        assert decision.source.endswith("superuser_hook")
        # a hook that defers leaves the source to what decides next
        assert demo_gate.inspect_sync(Person(1), "delete-post", Post(author_id=1)).source == (
            "policy:PostPolicy.delete_post"
        )

    def test_source_names_a_bound_method_hook(self, gate: Gate) -> None:
        class Hooks:
            def deny(self, user: Any, ability: str, *args: Any) -> bool:
                return False

        gate.before(Hooks().deny)
        gate.define("x", lambda user: True)
        assert gate.inspect_sync(Person(), "x").source.endswith("Hooks.deny")

    async def test_async_inspect_gives_the_same_decisions(self, demo_gate: Gate) -> None:
        assert await demo_gate.inspect(Person(1), "delete-post", Post(author_id=1)) == Decision(
            True, "policy:PostPolicy.delete_post"
        )
        assert await demo_gate.inspect(
            Person(1, is_active=False), "delete-post", Post(author_id=1)
        ) == Decision(False, "policy:PostPolicy.before")
        demo_gate.define("x", lambda user: 0)
        assert await demo_gate.inspect(Person(), "x") == Decision(False, "define:x")

    def test_allows_agrees_with_inspect(self, demo_gate: Gate) -> None:
        for user in (Person(1), Person(2), Person(1, is_active=False)):
            post = Post(author_id=1)
            assert (
                demo_gate.allows_sync(user, "update-post", post)
                is demo_gate.inspect_sync(user, "update-post", post).allowed
            )


# -- gate_evaluated ------------------------------------------------------------------------------
@pytest.fixture
def received(gate: Gate) -> Iterator[list[dict[str, Any]]]:
    with recording_evaluations(gate) as seen:
        yield seen


class TestGateEvaluatedSignal:
    def test_sent_once_per_allows_sync_with_all_fields(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        gate.define("edit", lambda user, thing, extra: thing.owner_id == user.pk)
        user, thing = Person(1), Thing(owner_id=1)
        assert gate.allows_sync(user, "edit", thing, "x") is True
        assert received == [
            {
                "user": user,
                "ability": "edit",
                "arguments": (thing, "x"),
                "allowed": True,
                "source": "define:edit",
            }
        ]

    async def test_sent_once_per_async_allows(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        gate.define("edit", lambda user: False)
        user = Person()
        assert await gate.allows(user, "edit") is False
        assert received == [
            {
                "user": user,
                "ability": "edit",
                "arguments": (),
                "allowed": False,
                "source": "define:edit",
            }
        ]

    async def test_sent_once_per_inspect_and_inspect_sync(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        gate.define("edit", lambda user: True)
        await gate.inspect(Person(), "edit")
        assert len(received) == 1
        # inspect_sync with a sync check does not need a running loop
        gate.inspect_sync(Person(), "edit")
        assert len(received) == 2

    def test_sent_with_policy_and_before_sources(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        gate.policy(Post, PostPolicy)
        post = Post(author_id=1)
        gate.allows_sync(Person(1), "update-post", post)
        gate.allows_sync(Person(1, is_active=False), "update-post", post)
        gate.allows_sync(Person(1), "create-post", Post)
        assert [(e["source"], e["allowed"], e["arguments"]) for e in received] == [
            ("policy:PostPolicy.update_post", True, (post,)),
            ("policy:PostPolicy.before", False, (post,)),
            ("policy:PostPolicy.create_post", True, (Post,)),
        ]

    def test_sent_once_when_a_global_hook_decides(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        def hook(user: Any, ability: str, *args: Any) -> bool:
            return False

        gate.before(hook)
        gate.define("edit", lambda user: True)
        gate.allows_sync(Person(), "edit")
        assert len(received) == 1
        assert received[0]["allowed"] is False
        assert received[0]["source"] == f"before:{__name__}.{hook.__qualname__}"

    def test_one_signal_per_evaluation_over_many_calls(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        gate.define("edit", lambda user: True)
        for _ in range(25):
            gate.allows_sync(Person(), "edit")
        assert len(received) == 25

    def test_not_sent_when_the_ability_is_unresolved(
        self, gate: Gate, received: list[dict[str, Any]]
    ) -> None:
        with pytest.raises(KeyError):
            gate.allows_sync(Person(), "nothing")
        assert received == []


# -- Gate.scope and assert_scope_matches ---------------------------------------------------------
@pytest.fixture
def fixtures(user: Any, other_user: Any, editor: Any) -> dict[str, Any]:
    """Two posts by alice, one by bob, none by carol (the editor)."""
    return {
        "alice": user,
        "bob": other_user,
        "carol": editor,
        "posts": [
            Post.objects.create(title="a1", author=user),
            Post.objects.create(title="a2", author=user),
            Post.objects.create(title="b1", author=other_user),
        ],
    }


@pytest.mark.django_db
class TestScope:
    def test_scope_narrows_to_own_posts_for_an_author(
        self, demo_gate: Gate, fixtures: dict[str, Any]
    ) -> None:
        scoped = demo_gate.scope(fixtures["alice"], "delete-post", Post.objects.all())
        assert sorted(p.title for p in scoped) == ["a1", "a2"]
        scoped = demo_gate.scope(fixtures["bob"], "delete-post", Post.objects.all())
        assert [p.title for p in scoped] == ["b1"]

    def test_scope_keeps_everything_for_an_editor(
        self, demo_gate: Gate, fixtures: dict[str, Any]
    ) -> None:
        scoped = demo_gate.scope(fixtures["carol"], "delete-post", Post.objects.all())
        assert scoped.count() == 3

    def test_scope_keeps_earlier_filters(self, demo_gate: Gate, fixtures: dict[str, Any]) -> None:
        scoped = demo_gate.scope(fixtures["alice"], "delete-post", Post.objects.filter(title="a2"))
        assert [p.title for p in scoped] == ["a2"]

    def test_scope_through_the_container_gate(self, fixtures: dict[str, Any]) -> None:
        gate = container.resolve(Gate)
        assert gate.scope(fixtures["bob"], "delete-post", Post.objects.all()).count() == 1

    def test_scope_key_error_when_policy_has_no_scope_method(
        self, demo_gate: Gate, fixtures: dict[str, Any]
    ) -> None:
        with pytest.raises(KeyError):
            demo_gate.scope(fixtures["alice"], "update-post", Post.objects.all())

    def test_scope_key_error_when_model_has_no_policy(self, fixtures: dict[str, Any]) -> None:
        from appframework.authorization import Role

        with pytest.raises(KeyError):
            Gate().scope(fixtures["alice"], "delete-post", Post.objects.all())
        gate = Gate()
        register(gate)
        with pytest.raises(KeyError):
            gate.scope(fixtures["alice"], "delete-role", Role.objects.all())

    @pytest.mark.parametrize("who", ["alice", "bob", "carol"])
    def test_assert_scope_matches_passes_for_the_demo_policy(
        self, demo_gate: Gate, fixtures: dict[str, Any], who: str
    ) -> None:
        assert_scope_matches(demo_gate, fixtures[who], "delete-post", Post.objects.all())

    def test_assert_scope_matches_on_an_explicit_subset(
        self, demo_gate: Gate, fixtures: dict[str, Any]
    ) -> None:
        assert_scope_matches(
            demo_gate, fixtures["bob"], "delete-post", Post.objects.all(), fixtures["posts"][1:]
        )

    def test_assert_scope_matches_raises_for_a_too_wide_scope(
        self, fixtures: dict[str, Any]
    ) -> None:
        class TooWide(PostPolicy):
            def scope_delete_post(self, user: Any, posts: Any) -> Any:
                return posts  # forgets the author filter

        gate = Gate()
        gate.policy(Post, TooWide)
        with pytest.raises(AssertionError, match="scope_delete-post and delete-post disagree"):
            assert_scope_matches(gate, fixtures["bob"], "delete-post", Post.objects.all())
        # the editor really may delete everything: no mismatch there
        assert_scope_matches(gate, fixtures["carol"], "delete-post", Post.objects.all())

    def test_assert_scope_matches_raises_for_a_too_narrow_scope(
        self, fixtures: dict[str, Any]
    ) -> None:
        class TooNarrow(PostPolicy):
            def scope_delete_post(self, user: Any, posts: Any) -> Any:
                return posts.filter(author_id=user.pk)  # forgets editors

        gate = Gate()
        gate.policy(Post, TooNarrow)
        assert_scope_matches(gate, fixtures["alice"], "delete-post", Post.objects.all())
        with pytest.raises(AssertionError) as info:
            assert_scope_matches(gate, fixtures["carol"], "delete-post", Post.objects.all())
        expected = sorted(p.pk for p in fixtures["posts"])
        assert str(expected) in str(info.value)

    def test_scope_agrees_with_allows_when_policy_before_denies(
        self, demo_gate: Gate, fixtures: dict[str, Any]
    ) -> None:
        # PostPolicy.before denies every ability to a deactivated account, so allows() is
        # False for each of alice's posts; the scope must then hold none of them.
        alice = fixtures["alice"]
        alice.is_active = False
        alice.save()
        assert not any(demo_gate.allows_sync(alice, "delete-post", p) for p in Post.objects.all())
        assert demo_gate.scope(alice, "delete-post", Post.objects.all()).count() == 0
        assert_scope_matches(demo_gate, alice, "delete-post", Post.objects.all())
