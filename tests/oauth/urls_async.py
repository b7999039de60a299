"""A URLconf of async views around ``aoauth_redirect`` / ``aoauth_callback``, at the
same paths as ``appframework.oauth.urls`` (so the provider's registered redirect URI
``http://testserver/auth/local/callback`` lands here). tests/oauth/test_mfa_and_async.py."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from appframework.oauth import aoauth_callback, aoauth_redirect


async def redirect_view(request: HttpRequest, provider: str) -> HttpResponse:
    return await aoauth_redirect(request, provider)


async def callback_view(request: HttpRequest, provider: str) -> HttpResponse:
    user = await aoauth_callback(request, provider)
    return JsonResponse(
        {
            "provider": user.provider,
            "provider_user_id": user.provider_user_id,
            "email": user.email,
            "email_verified": user.email_verified,
            "name": user.name,
            "next": getattr(request, "oauth_next", None),
            "has_access_token": bool(user.access_token),
        }
    )


urlpatterns = [
    path("auth/<str:provider>/redirect", redirect_view),
    path("auth/<str:provider>/callback", callback_view),
]
