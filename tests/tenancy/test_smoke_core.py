from __future__ import annotations

import pytest
from django.db import IntegrityError

from appframework_tenancy import TenantMismatch, TenantRequired, all_tenants, as_tenant
from tests.tenancy.lab.models import Comment, Post, Tag

pytestmark = pytest.mark.django_db


def test_smoke() -> None:
    with as_tenant(1):
        a = Post.objects.create(title="A")
    with as_tenant(2):
        b = Post.objects.create(title="B")
    qs = Post.objects.all()
    with as_tenant(1):
        assert [p.title for p in qs.all()] == ["A"]
        assert Post.objects.count() == 1
        assert list(Post.objects.values_list("title", flat=True)) == ["A"]
        with pytest.raises(TenantMismatch):
            Comment.objects.create(post=b, body="x")
        with pytest.raises(TenantMismatch):
            Post(pk=b.pk, title="hijack").save()
        Post.objects.update(title="A2")
    with as_tenant(2):
        assert [p.title for p in qs.all()] == ["B"]
        b.refresh_from_db()
        assert b.title == "B"
        with pytest.raises(TenantMismatch):
            a.title = "x"
            a.save()
        Tag.objects.bulk_create([Tag(name="t")])
        assert Tag.objects.get().tenant_id == 2
    assert Post.objects.count() == 2
    with pytest.raises(TenantRequired):
        Post.objects.create(title="none")
    with all_tenants():
        assert Post.objects.count() == 2
