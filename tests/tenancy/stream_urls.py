"""Views of the tenancy request tests: a plain listing, two streaming listings (a sync
and an async generator that query when the body is consumed, after the middleware has
returned) and a failing view, with a resolver that takes the tenant from the
``X-Lab-Tenant`` header (no header: no tenant)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.urls import path

from appframework_tenancy import current_tenant_id

from .lab.models import Post

HEADER = "HTTP_X_LAB_TENANT"


def resolve_lab_tenant(request: HttpRequest) -> int | None:
    value = request.META.get(HEADER)
    return None if value is None else int(value)


def titles(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        {"tenant": current_tenant_id(), "titles": [p.title for p in Post.objects.all()]}
    )


def stream_sync(request: HttpRequest) -> StreamingHttpResponse:
    def lines() -> Iterator[str]:
        yield "start\n"
        yield f"tenant={current_tenant_id()}\n"
        for post in Post.objects.all():
            yield f"{post.title}\n"

    return StreamingHttpResponse(lines(), content_type="text/plain")


def stream_async(request: HttpRequest) -> StreamingHttpResponse:
    async def lines() -> AsyncIterator[str]:
        yield "start\n"
        yield f"tenant={current_tenant_id()}\n"
        async for post in Post.objects.all():
            yield f"{post.title}\n"

    return StreamingHttpResponse(lines(), content_type="text/plain")


def boom(request: HttpRequest) -> JsonResponse:
    raise RuntimeError(f"failed under tenant {current_tenant_id()}")


urlpatterns = [
    path("lab/titles", titles),
    path("lab/stream", stream_sync),
    path("lab/astream", stream_async),
    path("lab/boom", boom),
]
