"""The leak matrix's models: a global Author, tenant-scoped Post/Comment/Detail/Tag/
Doc/Note, a many-to-many through an explicit tenant table."""

from __future__ import annotations

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models

from appframework_tenancy.models import AbstractMembership, AbstractTenant, TenantModel


class Author(models.Model):
    name = models.CharField(max_length=50)

    def __str__(self) -> str:
        return self.name


class Tag(TenantModel):
    name = models.CharField(max_length=50)


class Post(TenantModel):
    title = models.CharField(max_length=100)
    author = models.ForeignKey(
        Author, null=True, blank=True, on_delete=models.CASCADE, related_name="posts"
    )
    tags = models.ManyToManyField(Tag, through="PostTag", blank=True, related_name="posts")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.title


class PostTag(TenantModel):
    post = models.ForeignKey(Post, on_delete=models.CASCADE)
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE)


class Comment(TenantModel):
    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="comments")
    body = models.CharField(max_length=100)


class Detail(TenantModel):
    post = models.OneToOneField(Post, on_delete=models.CASCADE, related_name="detail")
    text = models.CharField(max_length=100)


class Doc(TenantModel):
    code = models.CharField(max_length=20)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant_id", "code"], name="lab_doc_code_per_tenant")
        ]


class Note(TenantModel):
    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.PositiveBigIntegerField()
    target = GenericForeignKey("content_type", "object_id")
    text = models.CharField(max_length=100)


class Organisation(AbstractTenant):
    """The lab's tenant model, as a project declares it."""


class Membership(AbstractMembership):
    """The lab's memberships (users are the demo's), as a project declares them."""

    tenant = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="memberships")
