"""Writes to tenant models: a new row gets the current tenant, every write path touches
only the current tenant's rows, and a write that would touch, move or point at another
tenant's row raises ``TenantMismatch`` without changing the database."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django import forms
from django.core.management import call_command
from django.db import connection, connections, transaction

from appframework_tenancy import TenantMismatch, TenantRequired, all_tenants, as_tenant
from tests.tenancy.lab.models import Comment, Doc, Post, Tag

pytestmark = pytest.mark.django_db

A, B = 1, 2


def row(model: Any, pk: Any) -> dict[str, Any]:
    """The row as stored, whatever tenant is selected."""
    with all_tenants():
        return dict(model.unscoped.filter(pk=pk).values().get())


def tenants_of(model: Any, **lookup: Any) -> list[Any]:
    with all_tenants():
        return list(
            model.unscoped.filter(**lookup).order_by("pk").values_list("tenant_id", flat=True)
        )


def count(model: Any, **lookup: Any) -> int:
    with all_tenants():
        return int(model.unscoped.filter(**lookup).count())


def write_fixture(directory: Path, objects: list[dict[str, Any]]) -> str:
    path = directory / "rows.json"
    path.write_text(json.dumps(objects), encoding="utf-8")
    return str(path)


@pytest.fixture
async def async_db() -> AsyncIterator[None]:
    """The async ORM's connection lives in asgiref's worker thread: close it after the
    test so the test database can be dropped."""
    yield
    await sync_to_async(connections.close_all)()


class DocForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Doc
        fields = ["code"]


# -- a new row gets the current tenant ---------------------------------------------------
def test_save_of_a_new_row_stamps_the_current_tenant() -> None:
    with as_tenant(B):
        post = Post(title="saved")
        post.save()
    assert post.tenant_id == B
    assert row(Post, post.pk)["tenant_id"] == B


def test_create_stamps_the_current_tenant() -> None:
    with as_tenant(A):
        post = Post.objects.create(title="created")
    assert row(Post, post.pk)["tenant_id"] == A


def test_get_or_create_creates_the_row_in_the_current_tenant_even_if_another_has_it() -> None:
    with as_tenant(A):
        Doc.objects.create(code="D1")
    with as_tenant(B):
        doc, created = Doc.objects.get_or_create(code="D1")
    assert created
    assert row(Doc, doc.pk)["tenant_id"] == B
    assert tenants_of(Doc, code="D1") == [A, B]


def test_get_or_create_finds_only_the_current_tenants_row() -> None:
    with as_tenant(A):
        a_doc = Doc.objects.create(code="D2")
    with as_tenant(B):
        b_doc = Doc.objects.create(code="D2")
        found, created = Doc.objects.get_or_create(code="D2")
    assert not created
    assert found.pk == b_doc.pk != a_doc.pk


def test_update_or_create_stamps_a_new_row_and_updates_only_the_current_tenants_row() -> None:
    with as_tenant(A):
        a_post = Post.objects.create(title="same")
    with as_tenant(B):
        new, created = Post.objects.update_or_create(title="D9", defaults={"title": "D9"})
        assert created
        b_post = Post.objects.create(title="same")
        updated, created = Post.objects.update_or_create(
            title="same", defaults={"title": "changed"}
        )
    assert row(Post, new.pk)["tenant_id"] == B
    assert not created
    assert updated.pk == b_post.pk
    assert row(Post, b_post.pk)["title"] == "changed"
    assert row(Post, a_post.pk)["title"] == "same"


def test_bulk_create_stamps_the_current_tenant() -> None:
    with as_tenant(A):
        tags = Tag.objects.bulk_create([Tag(name="x"), Tag(name="y")])
    assert all(tag.tenant_id == A for tag in tags)
    assert tenants_of(Tag, name__in=["x", "y"]) == [A, A]


def test_bulk_create_of_a_row_naming_another_tenant_raises_and_writes_nothing() -> None:
    with as_tenant(A), pytest.raises(TenantMismatch):
        Tag.objects.bulk_create([Tag(name="mine"), Tag(name="theirs", tenant_id=B)])
    assert count(Tag) == 0


def test_bulk_create_upsert_cannot_overwrite_another_tenants_row_by_primary_key(
    two_tenants: dict[str, Any],
) -> None:
    a_post = two_tenants["a_post"]
    before = row(Post, a_post.pk)
    with as_tenant(B), pytest.raises(TenantMismatch):
        Post.objects.bulk_create(
            [Post(pk=a_post.pk, title="hijack")],
            update_conflicts=True,
            update_fields=["title"],
            unique_fields=["id"],
        )
    assert row(Post, a_post.pk) == before


def test_create_of_a_row_naming_another_tenant_raises_and_writes_nothing() -> None:
    with as_tenant(A), pytest.raises(TenantMismatch):
        Post.objects.create(title="for B", tenant_id=B)
    assert count(Post) == 0


@pytest.mark.django_db(transaction=True)
async def test_acreate_and_abulk_create_stamp_the_current_tenant(async_db: None) -> None:
    with as_tenant(B):
        post = await Post.objects.acreate(title="async")
        tags = await Tag.objects.abulk_create([Tag(name="async")])
    with all_tenants():
        assert (await Post.unscoped.aget(pk=post.pk)).tenant_id == B
        assert [t async for t in Tag.unscoped.values_list("tenant_id", flat=True)] == [B]
    assert tags[0].tenant_id == B


# -- no tenant selected ------------------------------------------------------------------
def test_save_with_no_tenant_selected_and_no_tenant_id_raises_tenant_required() -> None:
    with pytest.raises(TenantRequired):
        Post(title="orphan").save()
    with pytest.raises(TenantRequired):
        Post.objects.create(title="orphan")
    with pytest.raises(TenantRequired):
        Tag.objects.bulk_create([Tag(name="orphan")])
    assert count(Post) == count(Tag) == 0


def test_create_with_no_tenant_selected_keeps_an_explicit_tenant_id() -> None:
    post = Post.objects.create(title="explicit", tenant_id=B)
    assert row(Post, post.pk)["tenant_id"] == B


# -- every tenant, on purpose ------------------------------------------------------------
def test_saving_an_existing_row_under_all_tenants_works(two_tenants: dict[str, Any]) -> None:
    with all_tenants():
        post = Post.objects.get(pk=two_tenants["b_post"].pk)
        post.title = "maintenance"
        post.save()
    assert row(Post, post.pk)["title"] == "maintenance"
    assert row(Post, post.pk)["tenant_id"] == B


def test_a_new_row_under_all_tenants_needs_an_explicit_tenant_id() -> None:
    with all_tenants():
        with pytest.raises(TenantRequired):
            Post.objects.create(title="whose")
        with pytest.raises(TenantRequired):
            Tag.objects.bulk_create([Tag(name="whose")])
        post = Post.objects.create(title="mine", tenant_id=A)
    assert count(Post) == 1
    assert row(Post, post.pk)["tenant_id"] == A


# -- update() and delete() through the manager -------------------------------------------
def test_update_through_the_manager_touches_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert Post.objects.update(title="renamed") == 1
    assert row(Post, two_tenants["a_post"].pk)["title"] == "renamed"
    assert row(Post, two_tenants["b_post"].pk)["title"] == "B-post"


def test_delete_through_the_manager_deletes_only_the_current_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        deleted, _ = Post.objects.all().delete()
        assert Post.objects.filter(pk=two_tenants["b_post"].pk).delete()[0] == 0
    assert deleted == 2  # A's post and its comment
    assert tenants_of(Post) == [B]
    assert tenants_of(Comment) == [B]


@pytest.mark.django_db(transaction=True)
async def test_aupdate_and_adelete_touch_only_the_current_tenants_rows(async_db: None) -> None:
    with all_tenants():
        a_post = await Post.objects.acreate(title="A", tenant_id=A)
        b_post = await Post.objects.acreate(title="B", tenant_id=B)
    with as_tenant(B):
        assert await Post.objects.aupdate(title="B2") == 1
        assert await Post.objects.filter(pk=a_post.pk).aupdate(title="hijack") == 0
        assert await Post.objects.filter(pk=a_post.pk).adelete() == (0, {})
    with all_tenants():
        assert (await Post.unscoped.aget(pk=a_post.pk)).title == "A"
        assert (await Post.unscoped.aget(pk=b_post.pk)).title == "B2"
    with as_tenant(A):
        deleted, _ = await Post.objects.all().adelete()
    assert deleted == 1
    with all_tenants():
        assert [p.pk async for p in Post.unscoped.all()] == [b_post.pk]


def test_update_and_bulk_update_of_another_tenants_object_touch_no_row(
    two_tenants: dict[str, Any],
) -> None:
    b_post = two_tenants["b_post"]
    before = row(Post, b_post.pk)
    with as_tenant(A):
        assert Post.objects.filter(pk=b_post.pk).update(title="hijack") == 0
        b_post.title = "hijack"
        assert Post.objects.bulk_update([b_post], ["title"]) == 0
    assert row(Post, b_post.pk) == before


# -- saving another tenant's row ---------------------------------------------------------
def test_saving_under_one_tenant_an_instance_loaded_under_another_raises_and_keeps_the_row(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        post = Post.objects.get(pk=two_tenants["a_post"].pk)
    before = row(Post, post.pk)
    with as_tenant(B), transaction.atomic():
        post.title = "x"
        with pytest.raises(TenantMismatch):
            post.save()
        # The refusal came before any SQL: the transaction is still usable.
        assert Post.objects.count() == 1
    assert row(Post, post.pk) == before


def test_saving_a_new_instance_with_another_tenants_primary_key_raises_and_keeps_the_row(
    two_tenants: dict[str, Any],
) -> None:
    a_post = two_tenants["a_post"]
    before = row(Post, a_post.pk)
    with as_tenant(B), transaction.atomic():
        with pytest.raises(TenantMismatch):
            Post(pk=a_post.pk, title="hijack").save()
        with pytest.raises(TenantMismatch):
            Post.objects.update_or_create(pk=a_post.pk, defaults={"title": "hijack"})
        assert Post.objects.count() == 1
    assert row(Post, a_post.pk) == before
    assert count(Post, title="hijack") == 0


def test_changing_the_tenant_of_a_loaded_row_raises_under_a_tenant_and_under_all_tenants(
    two_tenants: dict[str, Any],
) -> None:
    a_pk = two_tenants["a_post"].pk
    before = row(Post, a_pk)
    with as_tenant(A):
        post = Post.objects.get(pk=a_pk)
        post.tenant_id = B
        with pytest.raises(TenantMismatch):
            post.save()
    with all_tenants():
        post = Post.objects.get(pk=a_pk)
        post.tenant_id = B
        with pytest.raises(TenantMismatch):
            post.save()
    assert row(Post, a_pk) == before


def test_changing_the_tenant_of_a_just_created_row_under_all_tenants_raises_and_keeps_the_transaction_usable() -> (
    None
):
    with all_tenants(), transaction.atomic():
        post = Post.objects.create(title="fresh", tenant_id=A)
        post.tenant_id = B
        with pytest.raises(TenantMismatch):
            post.save()
        assert Post.objects.count() == 1
    assert row(Post, post.pk)["tenant_id"] == A


def test_update_or_bulk_update_of_the_tenant_column_raises_and_keeps_the_rows(
    two_tenants: dict[str, Any],
) -> None:
    a_pk = two_tenants["a_post"].pk
    before = row(Post, a_pk)
    for state in (as_tenant(A), all_tenants(), as_tenant(None)):
        with state:
            with pytest.raises(TenantMismatch):
                Post.objects.update(tenant_id=B)
            with pytest.raises(TenantMismatch):
                Post.unscoped.filter(pk=a_pk).update(tenant_id=B)
            post = Post.unscoped.get(pk=a_pk)
            post.tenant_id = B
            with pytest.raises(TenantMismatch):
                Post.objects.bulk_update([post], ["tenant_id"])
    assert row(Post, a_pk) == before
    assert tenants_of(Post) == [A, B]


# -- foreign keys stay inside a tenant ---------------------------------------------------
def test_a_comment_cannot_point_at_another_tenants_post(two_tenants: dict[str, Any]) -> None:
    b_post = two_tenants["b_post"]
    with as_tenant(A):
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post_id=b_post.pk, body="cross")
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post=b_post, body="cross")
        with pytest.raises(TenantMismatch):
            Comment.objects.bulk_create([Comment(post_id=b_post.pk, body="cross")])
    assert count(Comment, body="cross") == 0


def test_under_all_tenants_a_comment_of_another_tenant_than_its_post_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    b_post = two_tenants["b_post"]
    with all_tenants():
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post_id=b_post.pk, body="cross", tenant_id=A)
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post=b_post, body="cross", tenant_id=A)
        with pytest.raises(TenantMismatch):
            Comment.objects.bulk_create([Comment(post_id=b_post.pk, body="cross", tenant_id=A)])
        ok = Comment.objects.create(post_id=b_post.pk, body="same", tenant_id=B)
    assert count(Comment, body="cross") == 0
    assert row(Comment, ok.pk)["tenant_id"] == B


def test_repointing_an_existing_comment_at_another_tenants_post_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    before = row(Comment, a_comment.pk)
    with as_tenant(A):
        comment = Comment.objects.get(pk=a_comment.pk)
        comment.post_id = b_post.pk
        with pytest.raises(TenantMismatch):
            comment.save()
        with pytest.raises(TenantMismatch):
            Comment.objects.update(post=b_post)
        with pytest.raises(TenantMismatch):
            Comment.objects.bulk_update([comment], ["post"])
    assert row(Comment, a_comment.pk) == before


def test_update_under_all_tenants_or_no_tenant_cannot_repoint_a_comment_at_another_tenants_post(
    two_tenants: dict[str, Any],
) -> None:
    a_comment, b_post = two_tenants["a_comment"], two_tenants["b_post"]
    before = row(Comment, a_comment.pk)
    for state in (all_tenants(), as_tenant(None)):
        with state, pytest.raises(TenantMismatch):
            Comment.objects.filter(pk=a_comment.pk).update(post=b_post)
    assert row(Comment, a_comment.pk) == before


def test_deleting_a_post_deletes_only_its_own_tenants_comments(
    two_tenants: dict[str, Any],
) -> None:
    a_post, b_comment = two_tenants["a_post"], two_tenants["b_comment"]
    # The cross-tenant link a cascade would need cannot be written.
    with as_tenant(B), pytest.raises(TenantMismatch):
        Comment.objects.create(post=a_post, body="b on a")
    with all_tenants(), pytest.raises(TenantMismatch):
        Comment.objects.create(post=a_post, body="b on a", tenant_id=B)
    with as_tenant(A):
        Post.objects.get(pk=a_post.pk).delete()
    assert tenants_of(Post) == [B]
    assert tenants_of(Comment) == [B]
    assert row(Comment, b_comment.pk)["body"] == "b-comment"


# -- fixtures ----------------------------------------------------------------------------
def test_loaddata_stamps_the_current_tenant_on_a_row_without_tenant_id(tmp_path: Path) -> None:
    path = write_fixture(tmp_path, [{"model": "tenancy_lab.post", "fields": {"title": "fx"}}])
    with as_tenant(B):
        call_command("loaddata", path, verbosity=0)
    assert tenants_of(Post, title="fx") == [B]


def test_loaddata_with_no_tenant_keeps_the_fixtures_tenant_id(tmp_path: Path) -> None:
    path = write_fixture(
        tmp_path,
        [{"model": "tenancy_lab.post", "fields": {"title": "fx", "tenant_id": A}}],
    )
    call_command("loaddata", path, verbosity=0)
    assert tenants_of(Post, title="fx") == [A]


def test_loaddata_with_no_tenant_of_a_row_without_tenant_id_raises_tenant_required(
    tmp_path: Path,
) -> None:
    path = write_fixture(tmp_path, [{"model": "tenancy_lab.post", "fields": {"title": "fx"}}])
    with pytest.raises(TenantRequired):
        call_command("loaddata", path, verbosity=0)
    assert count(Post) == 0


def test_loaddata_refuses_a_row_of_another_tenant_or_a_cross_tenant_link(
    tmp_path: Path, two_tenants: dict[str, Any]
) -> None:
    other = write_fixture(
        tmp_path, [{"model": "tenancy_lab.post", "fields": {"title": "fx", "tenant_id": A}}]
    )
    with as_tenant(B), pytest.raises(TenantMismatch):
        call_command("loaddata", other, verbosity=0)
    cross = tmp_path / "cross.json"
    cross.write_text(
        json.dumps(
            [
                {
                    "model": "tenancy_lab.comment",
                    "fields": {"post": two_tenants["b_post"].pk, "body": "fx", "tenant_id": A},
                }
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(TenantMismatch):
        call_command("loaddata", str(cross), verbosity=0)
    assert count(Post, title="fx") == 0
    assert count(Comment, body="fx") == 0


# -- what the scoping does not cover ------------------------------------------------------
def test_raw_sql_is_not_scoped_and_returns_every_tenants_rows(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        rows = list(Post.objects.raw("SELECT * FROM tenancy_lab_post ORDER BY id"))
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM tenancy_lab_post")
            (total,) = cursor.fetchone()
    assert [p.tenant_id for p in rows] == [A, B]
    assert total == 2


def test_refresh_from_db_of_a_crafted_instance_loads_the_other_tenants_row_but_saving_it_is_refused(
    two_tenants: dict[str, Any],
) -> None:
    a_post = two_tenants["a_post"]
    before = row(Post, a_post.pk)
    with as_tenant(B):
        crafted = Post(pk=a_post.pk)
        crafted.refresh_from_db()
        assert (crafted.title, crafted.tenant_id) == ("A-post", A)
        crafted.title = "hijack"
        with pytest.raises(TenantMismatch):
            crafted.save()
    assert row(Post, a_post.pk) == before


# -- forms -------------------------------------------------------------------------------
def test_model_form_refuses_a_code_already_used_in_the_current_tenant() -> None:
    with as_tenant(B):
        Doc.objects.create(code="B1")
        form = DocForm({"code": "B1"})
        assert not form.is_valid()
    assert form.errors.as_data()["__all__"][0].code == "unique_together"
    assert count(Doc) == 1


def test_model_form_accepts_a_code_used_only_by_another_tenant_and_saves_it_in_the_current_one() -> (
    None
):
    with as_tenant(A):
        Doc.objects.create(code="A1")
    with as_tenant(B):
        form = DocForm({"code": "A1"})
        assert form.is_valid(), form.errors
        doc = form.save()
    assert row(Doc, doc.pk)["tenant_id"] == B
    assert tenants_of(Doc, code="A1") == [A, B]
