"""An async login flow written the way an ASGI project writes it: ``await attempt``,
then ``alogin_or_challenge``; the code form awaits ``acomplete_challenge``."""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse
from django.urls import path

from appframework.auth import AuthManager, current_user
from appframework.container import container
from appframework.mfa import acomplete_challenge, alogin_or_challenge, apending_user_id


async def login(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    user = await container.resolve(AuthManager).attempt(
        body["email"], body["password"], request=request
    )
    if user is None:
        return JsonResponse({"signed_in": False, "pending": None}, status=401)
    signed_in = await alogin_or_challenge(request, user)
    return JsonResponse({"signed_in": signed_in, "pending": await apending_user_id(request)})


async def code(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    user = await acomplete_challenge(request, body["code"], rate_limit_attempts=2)
    return JsonResponse({"user": None if user is None else user.pk})


async def me(request: HttpRequest) -> JsonResponse:
    user = await current_user(request)
    return JsonResponse({"user": None if user is None else user.pk})


urlpatterns = [path("login", login), path("code", code), path("me", me)]
