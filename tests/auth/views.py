"""Test-only views for the auth tests (wired in tests/auth/urls.py)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse

from appframework.auth import (
    AuthManager,
    alogin,
    alogout,
    api_auth_required,
    auth_required,
    current_api_user,
    current_api_user_sync,
    current_user,
    current_user_sync,
    login,
    logout,
    require_api_auth,
    require_api_auth_sync,
    require_auth,
    require_auth_sync,
)
from appframework.exceptions import (
    BadRequestException,
    ForbiddenException,
    TooManyRequestsException,
    UnauthorizedException,
    ValidationException,
)


def _pk(user: Any) -> Any:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user.pk


# -- sessions ---------------------------------------------------------------------------
def whoami_sync(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        {
            "current_user": _pk(current_user_sync(request)),
            "request_user": _pk(request.user),
            "authenticated": request.user.is_authenticated,
        }
    )


async def whoami_async(request: HttpRequest) -> JsonResponse:
    user = await current_user(request)
    auser = await request.auser()
    return JsonResponse(
        {
            "current_user": _pk(user),
            "request_user": _pk(auser),
            "authenticated": auser.is_authenticated,
        }
    )


def require_sync(request: HttpRequest) -> JsonResponse:
    user = require_auth_sync(request)
    return JsonResponse({"id": user.pk})


async def require_async(request: HttpRequest) -> JsonResponse:
    user = await require_auth(request)
    return JsonResponse({"id": user.pk})


def session_touch(request: HttpRequest) -> JsonResponse:
    """Creates a pre-login (anonymous) session holding some data."""
    request.session["cart"] = ["book"]
    return JsonResponse({"ok": True})


def login_sync(request: HttpRequest) -> JsonResponse:
    user = AuthManager().attempt_sync(
        request.POST.get("email", ""), request.POST.get("password", "")
    )
    if user is None:
        return JsonResponse({"ok": False}, status=401)
    login(request, user)
    return JsonResponse({"ok": True, "id": user.pk})


def logout_sync(request: HttpRequest) -> JsonResponse:
    logout(request, everywhere=request.POST.get("everywhere") == "1")
    return JsonResponse({"ok": True})


async def login_async(request: HttpRequest) -> JsonResponse:
    user = await AuthManager().attempt(
        request.POST.get("email", ""), request.POST.get("password", "")
    )
    if user is None:
        return JsonResponse({"ok": False}, status=401)
    await alogin(request, user)
    return JsonResponse({"ok": True, "id": user.pk})


async def logout_async(request: HttpRequest) -> JsonResponse:
    await alogout(request, everywhere=request.POST.get("everywhere") == "1")
    return JsonResponse({"ok": True})


@login_required
def django_login_required(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"id": request.user.pk})


# -- API tokens -------------------------------------------------------------------------
def api_whoami_sync(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        {
            "api_user": _pk(current_api_user_sync(request)),
            "current_user": _pk(current_user_sync(request)),
        }
    )


async def api_whoami_async(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        {
            "api_user": _pk(await current_api_user(request)),
            "current_user": _pk(await current_user(request)),
        }
    )


def api_require_sync(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"id": require_api_auth_sync(request).pk})


async def api_require_async(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"id": (await require_api_auth(request)).pk})


# -- decorators ---------------------------------------------------------------------------
@auth_required
def decorated_session_sync(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"id": request.user.pk})


@auth_required
async def decorated_session_async(request: HttpRequest) -> JsonResponse:
    user = await current_user(request)
    return JsonResponse({"id": user.pk})


@api_auth_required
def decorated_api_sync(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"id": current_api_user_sync(request).pk})


@api_auth_required
async def decorated_api_async(request: HttpRequest) -> JsonResponse:
    user = await current_api_user(request)
    return JsonResponse({"id": user.pk})


# -- errors ------------------------------------------------------------------------------
ERRORS: dict[str, Any] = {
    "unauthorized": lambda: UnauthorizedException("who are you"),
    "forbidden": lambda: ForbiddenException("not you"),
    "bad-request": lambda: BadRequestException("bad input"),
    "validation": lambda: ValidationException("title is required"),
    "too-many": lambda: TooManyRequestsException("slow down", retry_after=2.5),
}


def raise_error(request: HttpRequest, kind: str) -> HttpResponse:
    raise ERRORS[kind]()


async def raise_error_async(request: HttpRequest, kind: str) -> HttpResponse:
    raise ERRORS[kind]()
