"""django-ninja operations for the adapter tests (under /t/), beside the demo's routes
(/login for the TOTP challenge, /api/ninja/ for the demo's API)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from ninja import NinjaAPI, Schema, Status
from ninja.errors import HttpError
from ninja.throttling import AnonRateThrottle

from appframework.authorization import authorize, authorize_sync
from appframework.contrib.ninja import BearerAuth, SessionAuth, gate, install_exception_handlers
from appframework.exceptions import ValidationException
from testproject.blog.models import Post
from testproject.urls import urlpatterns as project_urlpatterns

api = install_exception_handlers(
    NinjaAPI(urls_namespace="tests-contrib-ninja", auth=[BearerAuth(), SessionAuth()])
)


class PostIn(Schema):
    title: str
    body: str = ""


def _who(request: HttpRequest) -> dict[str, Any]:
    user = request.auth  # type: ignore[attr-defined]
    return {"id": user.pk, "email": user.email, "type": user.__class__.__name__}


# -- authentication ---------------------------------------------------------------------------
@api.get("/me")
def me(request: HttpRequest) -> dict[str, Any]:
    return _who(request)


@api.get("/ame")
async def ame(request: HttpRequest) -> dict[str, Any]:
    return _who(request)


@api.get("/session-only", auth=SessionAuth())
def session_only(request: HttpRequest) -> dict[str, Any]:
    return _who(request)


@api.post("/csrf-off", auth=SessionAuth(csrf=False), response={201: dict})
def csrf_off(request: HttpRequest) -> Status[dict[str, Any]]:
    return Status(201, _who(request))


@api.post("/csrf-on", auth=SessionAuth(), response={201: dict})
def csrf_on(request: HttpRequest) -> Status[dict[str, Any]]:
    return Status(201, _who(request))


# -- the Gate ---------------------------------------------------------------------------------
@api.delete("/posts/{id}", response={204: None})
@gate("delete-post", Post)
def delete_post(request: HttpRequest, id: int) -> HttpResponse:
    Post.objects.filter(pk=id).delete()
    return HttpResponse(status=204)


@api.delete("/aposts/{id}", response={204: None})
@gate("delete-post", Post)
async def adelete_post(request: HttpRequest, id: int) -> HttpResponse:
    await Post.objects.filter(pk=id).adelete()
    return HttpResponse(status=204)


# The same operations open to everyone (auth=None): the Gate's own 401.
@api.delete("/open-posts/{id}", auth=None, response={204: None})
@gate("delete-post", Post)
def open_delete_post(request: HttpRequest, id: int) -> HttpResponse:
    Post.objects.filter(pk=id).delete()
    return HttpResponse(status=204)


@api.delete("/aopen-posts/{id}", auth=None, response={204: None})
@gate("delete-post", Post)
async def aopen_delete_post(request: HttpRequest, id: int) -> HttpResponse:
    await Post.objects.filter(pk=id).adelete()
    return HttpResponse(status=204)


@api.post("/authorize/{id}", auth=None)
def authorize_inside(request: HttpRequest, id: int) -> dict[str, Any]:
    post = get_object_or_404(Post, pk=id)
    user = authorize_sync(request, "delete-post", post)
    return {"allowed": user.email}


@api.post("/aauthorize/{id}", auth=None)
async def aauthorize_inside(request: HttpRequest, id: int) -> dict[str, Any]:
    post = await Post.objects.aget(pk=id)
    user = await authorize(request, "delete-post", post)
    return {"allowed": user.email}


# -- errors -----------------------------------------------------------------------------------
@api.post("/validate", auth=None)
def validate(request: HttpRequest, payload: PostIn) -> dict[str, Any]:
    return payload.dict()


@api.get("/conflict", auth=None)
def conflict(request: HttpRequest) -> None:
    raise HttpError(409, "That title is taken.")


@api.get("/http404", auth=None)
def http404(request: HttpRequest) -> None:
    raise Http404("no such thing: internals")


@api.get("/missing-post", auth=None)
def missing_post(request: HttpRequest) -> None:
    get_object_or_404(Post, pk=0)


@api.get("/permission-denied", auth=None)
def permission_denied(request: HttpRequest) -> None:
    raise PermissionDenied("internals")


@api.get("/suite-invalid", auth=None)
def suite_invalid(request: HttpRequest) -> None:
    raise ValidationException("title: too long.")


@api.get("/throttled", auth=None, throttle=AnonRateThrottle("1/min"))
def throttled(request: HttpRequest) -> dict[str, bool]:
    return {"ok": True}


urlpatterns = [path("t/", api.urls), *project_urlpatterns]
