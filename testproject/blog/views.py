"""Demo views: every feature reachable from a browser or curl."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from appframework.auth import (
    AuthManager,
    TokenManager,
    api_auth_required,
    auth_required,
    current_api_user,
    current_user_sync,
    login,
    logout,
)
from appframework.authorization import authorized
from appframework.container import container
from appframework.exceptions import BadRequestException

from .models import Post


def index(request: HttpRequest) -> HttpResponse:
    return render(request, "blog/index.html", {"me": current_user_sync(request)})


def login_view(request: HttpRequest) -> HttpResponse:
    error = None
    if request.method == "POST":
        user = container.resolve(AuthManager).attempt_sync(
            request.POST.get("email", ""), request.POST.get("password", "")
        )
        if user is not None:
            login(request, user)
            return redirect("index")
        error = "Wrong email or password."
    return render(request, "blog/login.html", {"error": error}, status=401 if error else 200)


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    logout(request, everywhere=request.POST.get("everywhere") == "1")
    return redirect("index")


@require_POST
@auth_required
def issue_token(request: HttpRequest) -> JsonResponse:
    token = container.resolve(TokenManager).issue(request.user)
    return JsonResponse({"token": token, "type": "Bearer"})


@require_GET
@api_auth_required
async def api_me(request: HttpRequest) -> JsonResponse:
    user = await current_api_user(request)
    return JsonResponse({"id": user.pk, "email": user.email})


def posts(request: HttpRequest) -> JsonResponse:
    """GET /posts: public. POST /posts: create (session or bearer; CSRF applies to cookies)."""
    if request.method == "POST":
        user = current_user_sync(request)
        if user is None:
            from appframework.auth import require_api_auth_sync

            user = require_api_auth_sync(request)
        try:
            data = json.loads(request.body or b"{}")
        except ValueError:
            raise BadRequestException("Body is not valid JSON.") from None
        title = data.get("title") if isinstance(data, dict) else None
        if not isinstance(title, str) or not title.strip() or len(title) > 200:
            from appframework.exceptions import ValidationException

            raise ValidationException("title: a non-empty string of at most 200 characters.")
        post = Post.objects.create(title=title.strip(), body=str(data.get("body", "")), author=user)
        return JsonResponse(post.as_dict(), status=201)
    if request.method not in ("GET", "HEAD"):
        return JsonResponse({"detail": "Method not allowed."}, status=405)
    return JsonResponse({"posts": [p.as_dict() for p in Post.objects.all()[:100]]})


async def post_detail(request: HttpRequest, id: int) -> HttpResponse:
    """GET /posts/<id> public; DELETE guarded by authorize(request, "delete-post", post)."""
    from appframework.authorization import authorize

    post = await Post.objects.filter(pk=id).afirst()
    if post is None:
        return JsonResponse({"detail": "Not found."}, status=404)
    if request.method in ("GET", "HEAD"):
        return JsonResponse(post.as_dict())
    if request.method == "DELETE":
        await authorize(request, "delete-post", post)
        await post.adelete()
        return HttpResponse(status=204)
    return JsonResponse({"detail": "Method not allowed."}, status=405)


@require_POST
@authorized("publish-post", Post)
def publish_post(request: HttpRequest, post: Post) -> JsonResponse:
    """POST /posts/<id>/publish: the role-based ability, through the view decorator."""
    return JsonResponse({"published": post.pk})
