"""Relations between tenant rows never cross tenants.

Django reaches related rows through the unscoped base manager (forward and one-to-one
descriptors, ``select_related``, forward ``prefetch_related``, delete cascades, generic
foreign keys), so the guard is on the write side: a foreign key, one-to-one, many-to-many
link or generic foreign key to another tenant's row is refused with ``TenantMismatch``
and nothing is written. Links written around the ORM (raw SQL, an expression in
``update()``) are not checked, and those descriptors then do return the foreign row.
Reverse and many-to-many related managers are scoped; joins from a global model are not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import Count, F, OuterRef, Subquery

from appframework.authorization import Gate
from appframework.container import container
from appframework_tenancy import TenantMismatch, all_tenants, as_tenant
from appframework_tenancy.gate import tenant_guard
from tests.tenancy.conftest import A, B
from tests.tenancy.lab.models import Author, Comment, Detail, Note, Post, PostTag, Tag

pytestmark = pytest.mark.django_db


def raw_update(model: Any, pk: Any, **values: Any) -> None:
    """Write columns behind the ORM's back, as a migration or a DBA could."""
    qn = connection.ops.quote_name
    assignments = ", ".join(f"{qn(column)} = %s" for column in values)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {qn(model._meta.db_table)} SET {assignments} WHERE {qn('id')} = %s",
            [*values.values(), pk],
        )


def raw_insert(model: Any, **values: Any) -> None:
    qn = connection.ops.quote_name
    columns = ", ".join(qn(column) for column in values)
    marks = ", ".join(["%s"] * len(values))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {qn(model._meta.db_table)} ({columns}) VALUES ({marks})",
            list(values.values()),
        )


def comment_row(comment: Any) -> tuple[Any, ...]:
    return tuple(
        Comment.unscoped.filter(pk=comment.pk).values_list("tenant_id", "post_id", "body").get()
    )


@pytest.fixture
def tags(two_tenants: dict[str, Any]) -> dict[str, Any]:
    """One tag per tenant, each linked to its tenant's post through ``PostTag``."""
    rows: dict[str, Any] = {}
    for name, tenant in (("a", A), ("b", B)):
        with as_tenant(tenant):
            tag = Tag.objects.create(name=f"{name}-tag")
            two_tenants[f"{name}_post"].tags.add(tag)
            rows[f"{name}_tag"] = tag
    return rows


@pytest.fixture
def author(two_tenants: dict[str, Any]) -> Any:
    """A global author with one post in each tenant."""
    shared = Author.objects.create(name="shared")
    Post.unscoped.filter(pk__in=[two_tenants["a_post"].pk, two_tenants["b_post"].pk]).update(
        author=shared
    )
    return shared


# -- a foreign key cannot be written across tenants ------------------------------------------


def test_create_with_a_foreign_key_to_another_tenants_row_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    b_post = two_tenants["b_post"]
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post=b_post, body="cross")
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post_id=b_post.pk, body="cross")
        with pytest.raises(TenantMismatch):
            Comment(post_id=b_post.pk, body="cross").save()
    assert Comment.unscoped.filter(body="cross").count() == 0


def test_foreign_key_check_holds_with_no_tenant_or_every_tenant_selected(
    two_tenants: dict[str, Any],
) -> None:
    b_post = two_tenants["b_post"]
    with pytest.raises(TenantMismatch):
        Comment.objects.create(post=b_post, body="cross", tenant_id=A)
    with all_tenants(), pytest.raises(TenantMismatch):
        Comment.unscoped.create(post_id=b_post.pk, body="cross", tenant_id=A)
    assert Comment.unscoped.filter(body="cross").count() == 0


def test_bulk_create_with_a_foreign_key_to_another_tenants_row_writes_nothing(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A), pytest.raises(TenantMismatch):
        Comment.objects.bulk_create(
            [Comment(post=a_post, body="fine"), Comment(post_id=b_post.pk, body="cross")]
        )
    assert Comment.unscoped.filter(body__in=["fine", "cross"]).count() == 0


def test_changing_a_foreign_key_to_another_tenants_row_on_save_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    before = comment_row(a_comment)
    with as_tenant(A):
        comment = Comment.objects.get(pk=a_comment.pk)
        comment.post = b_post
        with pytest.raises(TenantMismatch):
            comment.save()
        comment = Comment.objects.get(pk=a_comment.pk)
        comment.post_id = b_post.pk
        with pytest.raises(TenantMismatch):
            comment.save(update_fields=["post"])
    assert comment_row(a_comment) == before


@pytest.mark.parametrize(
    ("key", "as_instance"), [("post", True), ("post", False), ("post_id", False)]
)
def test_queryset_update_of_a_foreign_key_to_another_tenants_row_is_refused(
    two_tenants: dict[str, Any], key: str, as_instance: bool
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    value = b_post if as_instance else b_post.pk
    before = comment_row(a_comment)
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            Comment.objects.filter(pk=a_comment.pk).update(**{key: value})
        with pytest.raises(TenantMismatch):
            Comment.unscoped.filter(pk=a_comment.pk).update(**{key: value})
    assert comment_row(a_comment) == before


def test_queryset_update_with_no_tenant_selected_refuses_a_foreign_key_to_another_tenants_row(
    two_tenants: dict[str, Any],
) -> None:
    """save() and bulk_update() compare each row's tenant with its target's whatever the
    tenant state; update() must not be the one write path that links across tenants."""
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    before = comment_row(a_comment)
    with pytest.raises(TenantMismatch):
        Comment.unscoped.filter(pk=a_comment.pk).update(post=b_post)
    with all_tenants(), pytest.raises(TenantMismatch):
        Comment.unscoped.filter(pk=a_comment.pk).update(post_id=b_post.pk)
    assert comment_row(a_comment) == before


def test_bulk_update_of_a_foreign_key_to_another_tenants_row_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    before = comment_row(a_comment)
    with as_tenant(A):
        comment = Comment.objects.get(pk=a_comment.pk)
        comment.post = b_post
        with pytest.raises(TenantMismatch):
            Comment.objects.bulk_update([comment], ["post"])
        comment.post_id = b_post.pk
        with pytest.raises(TenantMismatch):
            Comment.objects.bulk_update([comment], ["post_id"])
    comment.post_id = b_post.pk
    with pytest.raises(TenantMismatch):
        Comment.unscoped.bulk_update([comment], ["post"])
    assert comment_row(a_comment) == before


def test_foreign_key_to_an_unsaved_stub_of_an_own_row_is_accepted(
    two_tenants: dict[str, Any],
) -> None:
    """``Comment(post=Post(pk=...))`` is a common Django idiom: the stub carries no
    tenant, so the target's tenant is read from the database."""
    a_post = two_tenants["a_post"]
    with as_tenant(A):
        comment = Comment.objects.create(post=Post(pk=a_post.pk), body="stub")
    assert comment_row(comment) == (A, a_post.pk, "stub")


def test_foreign_key_to_an_unsaved_instance_claiming_the_current_tenant_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    """An in-memory instance's ``tenant_id`` is not proof of its row's tenant: a stub built
    with another tenant's primary key is checked against the row in the database."""
    b_post = two_tenants["b_post"]
    with as_tenant(A), pytest.raises(TenantMismatch):
        Comment.objects.create(post=Post(pk=b_post.pk, tenant_id=A), body="claimed")
    assert Comment.unscoped.filter(body="claimed").count() == 0


def test_model_validation_accepts_a_foreign_key_to_another_tenants_row_but_save_refuses_it(
    two_tenants: dict[str, Any],
) -> None:
    """ForeignKey.validate() checks existence through the unscoped base manager: the save
    guard is what refuses the link (a ModelForm's choice field refuses it earlier)."""
    b_post = two_tenants["b_post"]
    with as_tenant(A):
        comment = Comment(post_id=b_post.pk, body="cross", tenant_id=A)
        comment.full_clean()
        with pytest.raises(TenantMismatch):
            comment.save()
    assert Comment.unscoped.filter(body="cross").count() == 0


# -- what related-object access returns ----------------------------------------------------------


def test_forward_foreign_key_select_related_and_prefetch_reach_only_own_rows(
    two_tenants: dict[str, Any],
) -> None:
    a_comment = two_tenants["a_comment"]
    with as_tenant(A):
        assert Comment.objects.get(pk=a_comment.pk).post.tenant_id == A
        assert [c.post.tenant_id for c in Comment.objects.select_related("post")] == [A]
        assert [c.post.tenant_id for c in Comment.objects.prefetch_related("post")] == [A]
    with as_tenant(B):
        assert [c.post.title for c in Comment.objects.select_related("post")] == ["B-post"]
        assert [c.post.title for c in Comment.objects.prefetch_related("post")] == ["B-post"]


def test_a_link_written_with_raw_sql_is_not_checked_and_related_access_returns_the_foreign_row(
    two_tenants: dict[str, Any],
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    raw_update(Comment, a_comment.pk, post_id=b_post.pk)
    with as_tenant(A):
        assert Comment.objects.get(pk=a_comment.pk).post == b_post
        assert Comment.objects.get(pk=a_comment.pk).post.tenant_id == B
        joined = Comment.objects.select_related("post").get(pk=a_comment.pk)
        assert joined.post.tenant_id == B
        (prefetched,) = Comment.objects.prefetch_related("post")
        assert prefetched.post.tenant_id == B
        # The scoped manager itself still hides the row.
        assert not Post.objects.filter(pk=b_post.pk).exists()


def test_a_link_written_by_an_update_expression_is_not_checked(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    a_comment = two_tenants["a_comment"]
    with as_tenant(A):
        shift = b_post.pk - a_post.pk
        assert Comment.objects.filter(pk=a_comment.pk).update(post_id=F("post_id") + shift) == 1
        assert Comment.objects.get(pk=a_comment.pk).post.tenant_id == B
        assert Comment.objects.filter(pk=a_comment.pk).update(post=a_post) == 1
        target = Subquery(Post.unscoped.filter(pk=b_post.pk).values("pk"))
        assert Comment.objects.filter(pk=a_comment.pk).update(post=target) == 1
    assert comment_row(a_comment) == (A, b_post.pk, "a-comment")


def test_one_to_one_to_another_tenants_row_is_refused(two_tenants: dict[str, Any]) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            Detail.objects.create(post=b_post, text="cross")
        with pytest.raises(TenantMismatch):
            Detail.objects.bulk_create([Detail(post_id=b_post.pk, text="cross")])
        detail = Detail.objects.create(post=a_post, text="own")
    assert Detail.unscoped.filter(text="cross").count() == 0
    with as_tenant(A):
        assert Post.objects.get(pk=a_post.pk).detail == detail
        assert [p.detail.text for p in Post.objects.select_related("detail")] == ["own"]
    with as_tenant(B):
        post = Post.objects.get(pk=b_post.pk)
        with pytest.raises(Detail.DoesNotExist):
            post.detail  # noqa: B018


def test_reverse_one_to_one_over_a_raw_sql_link_returns_the_foreign_row(
    two_tenants: dict[str, Any],
) -> None:
    b_post = two_tenants["b_post"]
    raw_insert(Detail, tenant_id=A, post_id=b_post.pk, text="forced")
    with as_tenant(B):
        post = Post.objects.get(pk=b_post.pk)
        assert post.detail.text == "forced"
        assert post.detail.tenant_id == A
        assert not Detail.objects.exists()


def test_delete_cascades_only_to_own_rows(two_tenants: dict[str, Any]) -> None:
    a_post, b_comment = two_tenants["a_post"], two_tenants["b_comment"]
    before = comment_row(b_comment)
    with as_tenant(A):
        _deleted, by_model = Post.objects.get(pk=a_post.pk).delete()
    assert by_model == {"tenancy_lab.Post": 1, "tenancy_lab.Comment": 1}
    assert Comment.unscoped.count() == 1
    assert comment_row(b_comment) == before


def test_delete_cascade_over_a_raw_sql_link_reaches_the_foreign_row(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_comment = two_tenants["a_post"], two_tenants["b_comment"]
    raw_update(Comment, b_comment.pk, post_id=a_post.pk)
    with as_tenant(A):
        Post.objects.get(pk=a_post.pk).delete()
    assert not Comment.unscoped.filter(pk=b_comment.pk).exists()


# -- reverse and many-to-many related managers are scoped ----------------------------------------


def test_reverse_foreign_key_manager_is_scoped_even_from_another_tenants_instance(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        assert [c.body for c in a_post.comments.all()] == ["a-comment"]
        assert list(b_post.comments.all()) == []
    with as_tenant(B):
        assert list(a_post.comments.all()) == []
        assert a_post.comments.count() == 0


def test_reverse_foreign_key_manager_hides_a_foreign_row_linked_by_raw_sql(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_comment = two_tenants["a_post"], two_tenants["b_comment"]
    raw_update(Comment, b_comment.pk, post_id=a_post.pk)
    with as_tenant(A):
        assert [c.body for c in a_post.comments.all()] == ["a-comment"]
        (post,) = Post.objects.prefetch_related("comments")
        assert [c.body for c in post.comments.all()] == ["a-comment"]


def test_reverse_prefetch_is_scoped(two_tenants: dict[str, Any], author: Any) -> None:
    with as_tenant(A):
        posts = list(Post.unscoped.prefetch_related("comments").order_by("pk"))
        assert [[c.body for c in p.comments.all()] for p in posts] == [["a-comment"], []]
        (shared,) = Author.objects.prefetch_related("posts")
        assert [p.title for p in shared.posts.all()] == ["A-post"]
    with as_tenant(B):
        (shared,) = Author.objects.prefetch_related("posts", "posts__comments")
        assert [p.title for p in shared.posts.all()] == ["B-post"]
        assert [c.body for c in shared.posts.all()[0].comments.all()] == ["b-comment"]


def test_many_to_many_managers_and_prefetch_are_scoped(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    a_tag = tags["a_tag"]
    with as_tenant(A):
        assert [t.name for t in a_post.tags.all()] == ["a-tag"]
        assert list(b_post.tags.all()) == []
        assert [p.title for p in a_tag.posts.all()] == ["A-post"]
        posts = list(Post.unscoped.prefetch_related("tags").order_by("pk"))
        assert [[t.name for t in p.tags.all()] for p in posts] == [["a-tag"], []]
    with as_tenant(B):
        assert list(a_tag.posts.all()) == []
        (tag,) = Tag.objects.prefetch_related("posts")
        assert [p.title for p in tag.posts.all()] == ["B-post"]


def test_many_to_many_managers_hide_a_foreign_row_linked_by_raw_sql(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    a_post, b_tag = two_tenants["a_post"], tags["b_tag"]
    raw_insert(PostTag, tenant_id=A, post_id=a_post.pk, tag_id=b_tag.pk)
    with as_tenant(A):
        assert [t.name for t in a_post.tags.all()] == ["a-tag"]
        (post,) = Post.objects.prefetch_related("tags")
        assert [t.name for t in post.tags.all()] == ["a-tag"]
    with as_tenant(B):
        assert [p.title for p in b_tag.posts.all()] == ["B-post"]


# -- relations from a global model -----------------------------------------------------------------


def test_annotation_across_a_relation_from_a_global_model_counts_every_tenants_rows(
    two_tenants: dict[str, Any], author: Any
) -> None:
    """Only the base table is scoped: a join from an untenanted model is not filtered."""
    with as_tenant(A):
        (shared,) = Author.objects.annotate(n=Count("posts"))
        assert shared.n == 2
        assert sorted(Author.objects.values_list("posts__title", flat=True)) == [
            "A-post",
            "B-post",
        ]
        assert Author.objects.filter(posts__title="B-post").exists()


def test_annotating_from_the_tenant_models_manager_counts_only_the_current_tenants_rows(
    two_tenants: dict[str, Any], author: Any
) -> None:
    per_author = (
        Post.objects.filter(author=OuterRef("pk"))
        .order_by()
        .values("author")
        .annotate(n=Count("pk"))
        .values("n")
    )
    with as_tenant(A):
        (shared,) = Author.objects.annotate(n=Subquery(per_author))
        assert shared.n == 1
        assert list(Post.objects.values("author").annotate(n=Count("pk")).order_by()) == [
            {"author": author.pk, "n": 1}
        ]
        assert not Author.objects.filter(
            pk__in=Post.objects.filter(title="B-post").values("author")
        ).exists()


def test_filter_across_a_relation_from_a_tenant_model_finds_no_other_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert not Comment.objects.filter(post__title="B-post").exists()
        assert list(Comment.objects.values_list("post__title", flat=True)) == ["A-post"]


# -- many-to-many links --------------------------------------------------------------------------


def test_many_to_many_add_across_tenants_is_refused_and_writes_nothing(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    """Django runs ``add()`` in ``atomic(savepoint=False)``: a caller that goes on using
    the transaction after a refusal wraps the call in its own ``atomic()``."""
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    a_tag, b_tag = tags["a_tag"], tags["b_tag"]
    before = PostTag.unscoped.count()
    with as_tenant(A):
        with pytest.raises(TenantMismatch), transaction.atomic():
            a_post.tags.add(b_tag)
        with pytest.raises(TenantMismatch), transaction.atomic():
            a_post.tags.add(b_tag.pk)
        with pytest.raises(TenantMismatch), transaction.atomic():
            a_tag.posts.add(b_post)
    with as_tenant(B), pytest.raises(TenantMismatch), transaction.atomic():
        b_tag.posts.add(a_post)
    with all_tenants(), pytest.raises(TenantMismatch), transaction.atomic():
        a_post.tags.add(b_tag)
    assert PostTag.unscoped.count() == before
    with as_tenant(A):
        assert [t.name for t in a_post.tags.all()] == ["a-tag"]


def test_many_to_many_add_of_another_tenants_rows_under_the_current_tenant_is_refused(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    a_post = two_tenants["a_post"]
    with as_tenant(A):
        second = Tag.objects.create(name="a-second")
    before = PostTag.unscoped.count()
    with as_tenant(B), pytest.raises(TenantMismatch), transaction.atomic():
        a_post.tags.add(second)
    assert PostTag.unscoped.count() == before


def test_refused_many_to_many_add_inside_its_own_atomic_block_leaves_the_caller_usable(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    """Django runs ``add()`` inside a transaction of its own, so the refusal marks that
    transaction for rollback; a caller that wants to go on after catching it wraps the
    ``add()`` in ``atomic()`` (a savepoint), as for an IntegrityError."""
    a_post, b_tag = two_tenants["a_post"], tags["b_tag"]
    with as_tenant(A):
        with pytest.raises(TenantMismatch), transaction.atomic():
            a_post.tags.add(b_tag)
        assert [t.name for t in a_post.tags.all()] == ["a-tag"]


def test_explicit_through_rows_across_tenants_are_refused(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    a_post, b_tag = two_tenants["a_post"], tags["b_tag"]
    before = PostTag.unscoped.count()
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            PostTag.objects.create(post=a_post, tag=b_tag)
        with pytest.raises(TenantMismatch):
            PostTag.objects.bulk_create([PostTag(post=a_post, tag_id=b_tag.pk)])
    assert PostTag.unscoped.count() == before


def test_explicit_through_rows_are_scoped(
    two_tenants: dict[str, Any], tags: dict[str, Any]
) -> None:
    assert PostTag.unscoped.count() == 2
    with as_tenant(A):
        assert [(pt.post.title, pt.tag.name) for pt in PostTag.objects.all()] == [
            ("A-post", "a-tag")
        ]
    with as_tenant(B):
        assert [(pt.post.title, pt.tag.name) for pt in PostTag.objects.all()] == [
            ("B-post", "b-tag")
        ]
        assert PostTag.objects.filter(post=two_tenants["a_post"]).count() == 0


# -- generic foreign keys and the Gate ------------------------------------------------------------


def test_generic_foreign_key_to_another_tenants_row_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    post_type = ContentType.objects.get_for_model(Post)
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            Note.objects.create(target=b_post, text="cross")
        with pytest.raises(TenantMismatch):
            Note(content_type=post_type, object_id=b_post.pk, text="cross").save()
        with pytest.raises(TenantMismatch):
            Note.objects.bulk_create([Note(target=b_post, text="cross")])
        note = Note.objects.create(target=a_post, text="own")
        note.object_id = b_post.pk
        with pytest.raises(TenantMismatch):
            note.save()
    assert Note.unscoped.filter(text="cross").count() == 0
    assert Note.unscoped.get(pk=note.pk).object_id == a_post.pk
    with as_tenant(A):
        assert Note.objects.get(pk=note.pk).target == a_post


def test_generic_foreign_key_to_a_global_row_is_accepted(two_tenants: dict[str, Any]) -> None:
    shared = Author.objects.create(name="global")
    with as_tenant(A):
        note = Note.objects.create(target=shared, text="on a global row")
        assert Note.objects.get(pk=note.pk).target == shared


def test_generic_foreign_key_over_a_raw_sql_link_returns_the_foreign_row(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        note = Note.objects.create(target=a_post, text="own")
    raw_update(Note, note.pk, object_id=b_post.pk)
    with as_tenant(A):
        assert Note.objects.get(pk=note.pk).target.tenant_id == B


@pytest.fixture
def gate() -> Iterator[Gate]:
    """The container's Gate with a check that allows everything."""
    resolved: Gate = container.resolve(Gate)
    resolved.define("tenancy-relations-view", lambda user, obj=None: True)
    try:
        yield resolved
    finally:
        resolved._abilities.pop("tenancy-relations-view", None)


def test_gate_denies_any_ability_on_another_tenants_object(
    two_tenants: dict[str, Any], gate: Gate, user: Any
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    assert tenant_guard in gate._before
    ability = "tenancy-relations-view"
    with as_tenant(A):
        assert gate.allows_sync(user, ability, a_post) is True
        assert gate.allows_sync(user, ability, b_post) is False
        assert gate.allows_sync(user, ability, two_tenants["b_comment"]) is False
        assert gate.allows_sync(user, ability) is True
    with as_tenant(B):
        assert gate.allows_sync(user, ability, a_post) is False
        assert gate.allows_sync(user, ability, b_post) is True
    assert gate.allows_sync(user, ability, b_post) is True
    with all_tenants():
        assert gate.allows_sync(user, ability, b_post) is True


def test_gate_denies_a_foreign_row_reached_through_a_raw_sql_link(
    two_tenants: dict[str, Any], gate: Gate, user: Any
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    a_post = two_tenants["a_post"]
    raw_update(Comment, a_comment.pk, post_id=b_post.pk)
    with as_tenant(A):
        note = Note.objects.create(target=a_post, text="own")
    raw_update(Note, note.pk, object_id=b_post.pk)
    with as_tenant(A):
        reached = Comment.objects.get(pk=a_comment.pk).post
        assert gate.allows_sync(user, "tenancy-relations-view", reached) is False
        target = Note.objects.get(pk=note.pk).target
        assert gate.allows_sync(user, "tenancy-relations-view", target) is False


async def test_async_gate_denies_another_tenants_object(
    two_tenants: dict[str, Any], gate: Gate, user: Any
) -> None:
    with as_tenant(A):
        assert await gate.allows(user, "tenancy-relations-view", two_tenants["a_post"])
        assert not await gate.allows(user, "tenancy-relations-view", two_tenants["b_post"])
