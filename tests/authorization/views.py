"""Test-only views guarded by the ``authorized`` decorator (see urls.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from appframework.authorization import authorize, authorize_sync, authorized
from testproject.blog.models import Post


@authorized("update-post", Post)
def sync_edit(request: HttpRequest, post: Post) -> JsonResponse:
    return JsonResponse({"kind": "sync", "post": post.pk, "title": post.title})


@authorized("update-post", Post)
async def async_edit(request: HttpRequest, post: Post) -> JsonResponse:
    return JsonResponse({"kind": "async", "post": post.pk, "title": post.title})


@authorized("update-post", Post, url_kwarg="post_id", as_kwarg="target")
def sync_edit_named(request: HttpRequest, target: Post, **rest: Any) -> JsonResponse:
    return JsonResponse({"kind": "sync-named", "post": target.pk, "rest": sorted(rest)})


def sync_authorize(request: HttpRequest, id: int) -> JsonResponse:
    post = Post.objects.get(pk=id)
    user = authorize_sync(request, "delete-post", post)
    return JsonResponse({"user": user.pk})


async def async_authorize(request: HttpRequest, id: int) -> JsonResponse:
    post = await Post.objects.aget(pk=id)
    user = await authorize(request, "delete-post", post)
    return JsonResponse({"user": user.pk})
