"""URLconf for tests/auth/test_revocation.py: the auth tests' routes plus

- ``POST /r/token`` / ``/r/atoken``: a token tied to the request's session
  (``TokenManager.issue(user, request=request)``);
- ``POST /r/logout`` / ``/r/alogout``: ``logout`` / ``alogout`` with ``revoke_tokens``
  from the form (``"1"`` True, ``"0"`` False, absent None) and ``everywhere``.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from appframework.auth import (
    TokenManager,
    alogout,
    logout,
    require_auth,
    require_auth_sync,
)


def _revoke_tokens(request: HttpRequest) -> bool | None:
    value = request.POST.get("revoke_tokens")
    return None if value is None else value == "1"


def token_sync(request: HttpRequest) -> JsonResponse:
    user = require_auth_sync(request)
    return JsonResponse({"token": TokenManager().issue(user, request=request)})


async def token_async(request: HttpRequest) -> JsonResponse:
    user = await require_auth(request)
    return JsonResponse({"token": TokenManager().issue(user, request=request)})


def logout_sync(request: HttpRequest) -> JsonResponse:
    logout(
        request,
        everywhere=request.POST.get("everywhere") == "1",
        revoke_tokens=_revoke_tokens(request),
    )
    return JsonResponse({"ok": True})


async def logout_async(request: HttpRequest) -> JsonResponse:
    await alogout(
        request,
        everywhere=request.POST.get("everywhere") == "1",
        revoke_tokens=_revoke_tokens(request),
    )
    return JsonResponse({"ok": True})


urlpatterns = [
    path("r/token", token_sync),
    path("r/atoken", token_async),
    path("r/logout", logout_sync),
    path("r/alogout", logout_async),
    path("", include("tests.auth.urls")),
]
