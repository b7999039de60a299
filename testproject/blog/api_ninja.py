"""/api/ninja/: the demo's posts as a django-ninja API with the suite's session and
bearer auth, the Gate and the one error format. Its OpenAPI page is /api/ninja/docs."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import NinjaAPI, Schema, Status

from appframework.contrib.ninja import (
    BearerAuth,
    BoundedParser,
    SessionAuth,
    gate,
    install_exception_handlers,
)

from .models import Post
from .posting import create_post

api = install_exception_handlers(
    NinjaAPI(
        title="appframework demo (django-ninja)",
        urls_namespace="ninja-demo",
        auth=[BearerAuth(), SessionAuth()],
        parser=BoundedParser(),
    )
)


class PostIn(Schema):
    title: str
    body: str = ""


class PostOut(Schema):
    id: int
    title: str
    body: str
    author_id: int
    tenant_id: int


@api.get("/posts", response=list[PostOut])
def list_posts(request: HttpRequest) -> list[Post]:
    """The current tenant's posts (the scoped manager)."""
    return list(Post.objects.all()[:100])


@api.post("/posts", response={201: PostOut})
def add_post(request: HttpRequest, payload: PostIn) -> Status[Post]:
    return Status(201, create_post(request.auth, payload.title, payload.body))


@api.get("/posts/{id}", response=PostOut)
def get_post(request: HttpRequest, id: int) -> Post:
    return get_object_or_404(Post, pk=id)


@api.delete("/posts/{id}", response={204: None})
@gate("delete-post", Post)
async def delete_post(request: HttpRequest, id: int) -> HttpResponse:
    """Async: the Gate decides (authors, editors, admins) before the delete."""
    await Post.objects.filter(pk=id).adelete()
    return HttpResponse(status=204)
