"""Reads through the scoped default manager see only the current tenant's rows.

Every read path of a queryset (fetching, counting, aggregating, paginating, subqueries,
related managers, async iteration) is filtered by the tenant active when the SQL runs,
including querysets, forms and expressions built at import time with no tenant selected.
With no tenant selected (and strict mode off) the query is exactly the unfiltered one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from django import forms
from django.core.paginator import Paginator
from django.db import connection, connections
from django.db.models import Count, Exists, OuterRef, Subquery
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.views.generic import ListView

from appframework_tenancy import as_tenant
from tests.tenancy.conftest import A, B
from tests.tenancy.lab.models import Author, Comment, Post, PostTag, Tag

pytestmark = pytest.mark.django_db


# -- built at import time, with no tenant selected ----------------------------------------


class PostListView(ListView):
    """A class-level queryset, evaluated per request by ``get_queryset()``."""

    queryset = Post.objects.all()


class CommentForm(forms.ModelForm):
    """The ``post`` choice field is generated from ``Post``'s default manager."""

    class Meta:
        model = Comment
        fields = ["post", "body"]


class DeclaredPostCommentForm(forms.ModelForm):
    """The ``post`` field declared explicitly with a queryset made at import time."""

    post = forms.ModelChoiceField(queryset=Post.objects.all())

    class Meta:
        model = Comment
        fields = ["post", "body"]


class PostFilterForm(forms.Form):
    """A search/filter form whose choices come from querysets made at import time."""

    post = forms.ModelChoiceField(queryset=Post.objects.all(), required=False)
    posts = forms.ModelMultipleChoiceField(queryset=Post.objects.all(), required=False)


HAS_COMMENTS = Exists(Comment.objects.filter(post=OuterRef("pk")))
COMMENT_COUNT = Subquery(
    Comment.objects.filter(post=OuterRef("pk"))
    .values("post")
    .annotate(n=Count("pk"))
    .values("n")[:1]
)
HAS_TAG_LINKS = Exists(PostTag.objects.filter(post=OuterRef("pk")))
MODULE_POSTS = Post.objects.all()


def titles(qs: Any) -> list[str]:
    return [post.title for post in qs]


def choice_labels(field: forms.ModelChoiceField) -> list[str]:
    return [str(label) for value, label in field.choices if value != ""]


# -- the basic read API ------------------------------------------------------------------


def test_all_lists_only_the_current_tenants_rows(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        assert titles(Post.objects.all()) == ["A-post"]
    with as_tenant(B):
        assert titles(Post.objects.all()) == ["B-post"]


def test_no_tenant_selected_reads_every_tenants_rows(two_tenants: dict[str, Any]) -> None:
    assert titles(Post.objects.all()) == ["A-post", "B-post"]


def test_get_finds_own_row_and_raises_does_not_exist_for_another_tenants_pk(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        assert Post.objects.get(pk=a_post.pk) == a_post
        with pytest.raises(Post.DoesNotExist):
            Post.objects.get(pk=b_post.pk)
    with as_tenant(B):
        assert Post.objects.get(pk=b_post.pk) == b_post
        with pytest.raises(Post.DoesNotExist):
            Post.objects.get(pk=a_post.pk)


def test_filter_never_matches_another_tenants_rows(two_tenants: dict[str, Any]) -> None:
    b_post = two_tenants["b_post"]
    with as_tenant(A):
        assert not Post.objects.filter(title="B-post").exists()
        assert list(Post.objects.filter(pk=b_post.pk)) == []
        assert titles(Post.objects.filter(title__endswith="-post")) == ["A-post"]
        assert titles(Post.objects.exclude(title="nothing")) == ["A-post"]


def test_first_and_last_return_the_current_tenants_rows(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        assert Post.objects.first() == two_tenants["a_post"]
        assert Post.objects.last() == two_tenants["a_post"]
    with as_tenant(B):
        assert Post.objects.first() == two_tenants["b_post"]
        assert Post.objects.last() == two_tenants["b_post"]


def test_count_and_exists_are_scoped(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        assert Post.objects.count() == 1
        assert Comment.objects.count() == 1
        assert Post.objects.filter(pk=two_tenants["a_post"].pk).exists()
        assert not Post.objects.filter(pk=two_tenants["b_post"].pk).exists()
    with as_tenant(3):
        assert Post.objects.count() == 0
        assert not Post.objects.exists()


def test_in_bulk_leaves_out_another_tenants_pks(two_tenants: dict[str, Any]) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        assert Post.objects.in_bulk([a_post.pk, b_post.pk]) == {a_post.pk: a_post}
        assert set(Post.objects.in_bulk()) == {a_post.pk}


def test_aggregate_and_annotate_count_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert Post.objects.aggregate(n=Count("pk")) == {"n": 1}
        assert Comment.objects.aggregate(n=Count("pk")) == {"n": 1}
        annotated = Post.objects.annotate(n=Count("comments"))
        assert [(p.title, p.n) for p in annotated] == [("A-post", 1)]
        by_tenant = Post.objects.values("tenant_id").annotate(n=Count("pk"))
        assert list(by_tenant) == [{"tenant_id": A, "n": 1}]


def test_values_and_values_list_are_scoped(two_tenants: dict[str, Any]) -> None:
    with as_tenant(B):
        assert list(Post.objects.values("title")) == [{"title": "B-post"}]
        assert list(Post.objects.values_list("title", flat=True)) == ["B-post"]
        assert list(Post.objects.values_list("title", "tenant_id")) == [("B-post", B)]


def test_iterator_is_scoped(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        assert titles(Post.objects.iterator()) == ["A-post"]
        assert titles(Post.objects.iterator(chunk_size=1)) == ["A-post"]


def test_paginator_counts_and_pages_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        Post.objects.create(title="A-second")
        Post.objects.create(title="A-third")
    with as_tenant(A):
        paginator = Paginator(Post.objects.all(), 2)
        assert paginator.count == 3
        assert paginator.num_pages == 2
        assert titles(paginator.page(1)) == ["A-post", "A-second"]
        assert titles(paginator.page(2)) == ["A-third"]
    with as_tenant(B):
        paginator = Paginator(Post.objects.all(), 2)
        assert paginator.count == 1
        assert titles(paginator.page(1)) == ["B-post"]


def test_union_of_scoped_querysets_is_scoped(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        # Post orders by id: a compound statement's parts must not be ordered.
        union = (
            Post.objects.filter(title="A-post")
            .order_by()
            .union(Post.objects.filter(title="B-post").order_by())
        )
        assert titles(union) == ["A-post"]
        everything = (
            Post.objects.filter(title__startswith="A")
            .order_by()
            .union(Post.objects.filter(title__startswith="B").order_by())
        )
        assert everything.count() == 1
        assert list(everything.values_list("title", flat=True)) == ["A-post"]


# -- subqueries ----------------------------------------------------------------------------


def test_pk_in_scoped_queryset_subquery_is_scoped(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        outer = Post.unscoped.filter(pk__in=Post.objects.all())
        assert titles(outer) == ["A-post"]
        comments = Comment.unscoped.filter(post__in=Post.objects.all())
        assert [c.body for c in comments] == ["a-comment"]


def test_exists_and_subquery_over_the_scoped_manager_are_scoped(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        has = Post.unscoped.annotate(
            has=Exists(Comment.objects.filter(post=OuterRef("pk")))
        ).order_by("pk")
        assert [(p.title, p.has) for p in has] == [("A-post", True), ("B-post", False)]
        counted = Post.unscoped.annotate(
            n=Subquery(Comment.objects.filter(post=OuterRef("pk")).values("body")[:1])
        ).order_by("pk")
        assert [(p.title, p.n) for p in counted] == [("A-post", "a-comment"), ("B-post", None)]


def test_exists_and_subquery_built_at_import_follow_the_current_tenant(
    two_tenants: dict[str, Any],
) -> None:
    for tenant, expected_has, expected_n in (
        (A, [True, False], [1, None]),
        (B, [False, True], [None, 1]),
    ):
        with as_tenant(tenant):
            rows = Post.unscoped.annotate(has=HAS_COMMENTS, n=COMMENT_COUNT).order_by("pk")
            assert [p.has for p in rows] == expected_has
            assert [p.n for p in rows] == expected_n
            assert Post.unscoped.filter(HAS_COMMENTS).count() == 1


def test_explicit_through_model_rows_are_scoped_in_reads_and_subqueries(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        a_post.tags.add(Tag.objects.create(name="a-tag"))
    with as_tenant(B):
        b_post.tags.add(Tag.objects.create(name="b-tag"))
    assert PostTag.unscoped.count() == 2
    with as_tenant(A):
        assert [(pt.post_id, pt.tag.name) for pt in PostTag.objects.all()] == [(a_post.pk, "a-tag")]
        rows = Post.unscoped.annotate(linked=HAS_TAG_LINKS).order_by("pk")
        assert [p.linked for p in rows] == [True, False]
    with as_tenant(B):
        rows = Post.unscoped.annotate(linked=HAS_TAG_LINKS).order_by("pk")
        assert [p.linked for p in rows] == [False, True]


# -- related managers ------------------------------------------------------------------------


def test_reverse_manager_of_a_global_model_lists_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    author = Author.objects.create(name="shared")
    Post.unscoped.filter(pk__in=[two_tenants["a_post"].pk, two_tenants["b_post"].pk]).update(
        author=author
    )
    with as_tenant(A):
        assert titles(author.posts.all()) == ["A-post"]
        assert author.posts.count() == 1
    with as_tenant(B):
        assert titles(author.posts.all()) == ["B-post"]
    assert author.posts.count() == 2


def test_reverse_manager_of_a_tenant_model_is_scoped(two_tenants: dict[str, Any]) -> None:
    a_post = two_tenants["a_post"]
    with as_tenant(A):
        assert [c.body for c in a_post.comments.all()] == ["a-comment"]
        assert a_post.comments.count() == 1


# -- querysets, forms and fields built with no tenant ----------------------------------------


def test_class_level_view_queryset_follows_the_tenant_at_evaluation(
    two_tenants: dict[str, Any],
) -> None:
    request = RequestFactory().get("/posts/")
    for tenant, expected in ((A, ["A-post"]), (B, ["B-post"])):
        with as_tenant(tenant):
            assert titles(PostListView.queryset.all()) == expected
            view = PostListView()
            view.setup(request)
            assert titles(view.get_queryset()) == expected
            response = PostListView.as_view()(request)
            assert titles(response.context_data["object_list"]) == expected


def test_module_level_queryset_follows_the_tenant_at_evaluation(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert titles(MODULE_POSTS.all()) == ["A-post"]
        assert MODULE_POSTS.count() == 1
    with as_tenant(B):
        assert titles(MODULE_POSTS.all()) == ["B-post"]


def test_queryset_built_under_one_tenant_follows_the_tenant_active_when_evaluated(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        qs = Post.objects.filter(title__endswith="post")
        values = Post.objects.values_list("title", flat=True)
    with as_tenant(B):
        assert titles(qs) == ["B-post"]
        assert list(values) == ["B-post"]


def test_an_evaluated_queryset_keeps_its_result_cache_under_another_tenant(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        qs = Post.objects.all()
        assert titles(qs) == ["A-post"]
    with CaptureQueriesContext(connection) as queries, as_tenant(B):
        # Evaluated once: Django answers from the cache, without a query.
        assert titles(qs) == ["A-post"]
        assert len(qs) == 1
        assert qs.count() == 1
        assert qs[0].title == "A-post"
    assert len(queries) == 0
    with as_tenant(B):
        # A fresh clone runs a new query, under the current tenant.
        assert titles(qs.all()) == ["B-post"]


def test_model_form_foreign_key_choices_list_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert choice_labels(CommentForm().fields["post"]) == ["A-post"]
    with as_tenant(B):
        assert choice_labels(CommentForm().fields["post"]) == ["B-post"]


def test_model_form_refuses_another_tenants_foreign_key(two_tenants: dict[str, Any]) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        form = CommentForm(data={"post": b_post.pk, "body": "sneaky"})
        assert not form.is_valid()
        assert form.errors["post"][0].startswith("Select a valid choice")
        form = CommentForm(data={"post": a_post.pk, "body": "fine"})
        assert form.is_valid(), form.errors
        comment = form.save()
    assert comment.tenant_id == A
    assert comment.post_id == a_post.pk
    assert Comment.unscoped.filter(body="sneaky").count() == 0


def test_declared_model_choice_field_on_a_model_form_follows_the_current_tenant(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(B):
        assert choice_labels(DeclaredPostCommentForm().fields["post"]) == ["B-post"]
        form = DeclaredPostCommentForm(data={"post": a_post.pk, "body": "sneaky"})
        assert not form.is_valid()
        assert "post" in form.errors
        form = DeclaredPostCommentForm(data={"post": b_post.pk, "body": "fine"})
        assert form.is_valid(), form.errors


def test_filter_form_choice_fields_declared_at_import_follow_the_current_tenant(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        form = PostFilterForm()
        assert choice_labels(form.fields["post"]) == ["A-post"]
        assert choice_labels(form.fields["posts"]) == ["A-post"]
        bad = PostFilterForm(data={"post": b_post.pk})
        assert not bad.is_valid()
        assert "post" in bad.errors
        bad_many = PostFilterForm(data={"posts": [a_post.pk, b_post.pk]})
        assert not bad_many.is_valid()
        assert "posts" in bad_many.errors
        good = PostFilterForm(data={"post": a_post.pk, "posts": [a_post.pk]})
        assert good.is_valid(), good.errors
        assert good.cleaned_data["post"] == a_post
        assert list(good.cleaned_data["posts"]) == [a_post]
    with as_tenant(B):
        assert choice_labels(PostFilterForm().fields["post"]) == ["B-post"]


# -- the SQL -------------------------------------------------------------------------------------


def test_sql_under_a_tenant_shows_the_tenant_condition(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        sql = str(Post.objects.all().query)
    table = Post._meta.db_table
    assert f'"{table}"."tenant_id" = {A}' in sql.replace("`", '"')


def test_sql_with_no_tenant_equals_the_unfiltered_query(db: Any) -> None:
    assert str(Post.objects.all().query) == str(Post.unscoped.all().query)
    assert "WHERE" not in str(Post.objects.all().query)
    assert str(Post.objects.filter(title="x").query) == str(Post.unscoped.filter(title="x").query)


def test_sql_under_a_tenant_is_identical_to_a_hand_written_tenant_filter(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        scoped = Post.objects.filter(title="A-post")
        manual = Post.unscoped.filter(title="A-post", tenant_id=A)
        assert str(scoped.query) == str(Post.unscoped.filter(tenant_id=A, title="A-post").query)
        assert scoped.query.sql_with_params() == (
            Post.unscoped.filter(tenant_id=A).filter(title="A-post").query.sql_with_params()
        )
        with CaptureQueriesContext(connection) as scoped_queries:
            assert titles(Post.objects.all()) == ["A-post"]
        with CaptureQueriesContext(connection) as manual_queries:
            assert titles(Post.unscoped.filter(tenant_id=A)) == ["A-post"]
    assert len(scoped_queries) == len(manual_queries) == 1
    assert scoped_queries[0]["sql"] == manual_queries[0]["sql"]
    assert titles(manual) == ["A-post"]


def test_scoped_read_costs_the_same_queries_as_a_hand_written_filter(
    two_tenants: dict[str, Any], django_assert_num_queries: Any
) -> None:
    with as_tenant(A):
        for posts in (Post.objects, Post.unscoped.filter(tenant_id=A)):
            with django_assert_num_queries(1):
                assert titles(posts.all()) == ["A-post"]
            with django_assert_num_queries(1):
                assert posts.count() == 1
            with django_assert_num_queries(2):
                (post,) = posts.prefetch_related("comments")
                assert [c.body for c in post.comments.all()] == ["a-comment"]


# -- async ---------------------------------------------------------------------------------------


@pytest.fixture
def close_worker_connections() -> Iterator[None]:
    """The async ORM runs in asgiref's worker thread; close its connection afterwards so
    PostgreSQL can drop the test database."""
    yield
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("close_worker_connections")
async def test_async_reads_are_scoped(two_tenants: dict[str, Any]) -> None:
    a_post, b_post = two_tenants["a_post"], two_tenants["b_post"]
    with as_tenant(A):
        assert await Post.objects.acount() == 1
        assert (await Post.objects.aget(pk=a_post.pk)).title == "A-post"
        with pytest.raises(Post.DoesNotExist):
            await Post.objects.aget(pk=b_post.pk)
        assert await Post.objects.filter(pk=a_post.pk).aexists()
        assert not await Post.objects.filter(pk=b_post.pk).aexists()
        assert await Post.objects.afirst() == a_post
        assert await Post.objects.alast() == a_post
        assert [p.title async for p in Post.objects.all()] == ["A-post"]
        assert [c.body async for c in Comment.objects.all()] == ["a-comment"]
    with as_tenant(B):
        assert [p.title async for p in Post.objects.all()] == ["B-post"]
        assert await Post.objects.acount() == 1
        assert await Post.objects.afirst() == b_post


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("close_worker_connections")
async def test_async_reads_of_a_queryset_built_at_import_follow_the_current_tenant(
    two_tenants: dict[str, Any],
) -> None:
    for tenant, expected in ((A, ["A-post"]), (B, ["B-post"])):
        with as_tenant(tenant):
            assert [p.title async for p in MODULE_POSTS.all()] == expected
            assert await MODULE_POSTS.acount() == 1
            assert await PostListView.queryset.aexists()
