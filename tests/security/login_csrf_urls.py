"""Test-only views marked ``csrf_protect_login`` (sync and async) and an unmarked twin,
next to the routes of ``tests.security.urls`` (see test_csrf_protect_login.py)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import path

from appframework.security import csrf_protect_login

from .urls import urlpatterns as security_urlpatterns


def _answer(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"method": request.method, "email": request.POST.get("email")})


@csrf_protect_login
def marked_login(request: HttpRequest) -> JsonResponse:
    """Stands for a view that establishes a session (login, sign-up, an SSO callback)."""
    return _answer(request)


@csrf_protect_login
async def async_marked_login(request: HttpRequest) -> JsonResponse:
    return _answer(request)


def unmarked(request: HttpRequest) -> JsonResponse:
    return _answer(request)


async def async_unmarked(request: HttpRequest) -> JsonResponse:
    return _answer(request)


urlpatterns = [
    path("sec/login-marked", marked_login),
    path("sec/async-login-marked", async_marked_login),
    path("sec/unmarked", unmarked),
    path("sec/async-unmarked", async_unmarked),
    *security_urlpatterns,
]
