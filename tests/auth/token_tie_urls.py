"""URLconf for tests/auth/test_token_session_tie.py: the revocation tests' routes plus

- ``POST /tt/token-for/<uid>`` / ``/tt/atoken-for/<uid>``: the logged-in user (an admin,
  say) issues a token for the user ``uid`` with ``TokenManager.issue(target, request=request)``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from appframework.auth import TokenManager, require_auth, require_auth_sync


def token_for_sync(request: HttpRequest, uid: int) -> JsonResponse:
    require_auth_sync(request)
    target = get_user_model()._default_manager.get(pk=uid)
    return JsonResponse({"token": TokenManager().issue(target, request=request)})


async def token_for_async(request: HttpRequest, uid: int) -> JsonResponse:
    await require_auth(request)
    target = await get_user_model()._default_manager.aget(pk=uid)
    return JsonResponse({"token": TokenManager().issue(target, request=request)})


urlpatterns = [
    path("tt/token-for/<int:uid>", token_for_sync),
    path("tt/atoken-for/<int:uid>", token_for_async),
    path("", include("tests.auth.revocation_urls")),
]
