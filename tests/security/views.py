"""Test-only views for the CSRF and security-header tests (see urls.py)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.views.decorators.csrf import csrf_exempt

from appframework.security import csrf_token


def _describe(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    return {
        "method": request.method,
        "authenticated": bool(user is not None and user.is_authenticated),
        "user_id": getattr(user, "pk", None),
    }


def echo(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Any method; reports the method and who the request is authenticated as."""
    return JsonResponse(_describe(request))


async def async_echo(request: HttpRequest) -> JsonResponse:
    user = await request.auser()
    return JsonResponse(
        {"method": request.method, "authenticated": bool(user.is_authenticated), "user_id": user.pk}
    )


@csrf_exempt
def exempt_echo(request: HttpRequest) -> JsonResponse:
    return JsonResponse(_describe(request))


def token(request: HttpRequest) -> JsonResponse:
    """The CSRF token as appframework's csrf_token() and Django's get_token() see it."""
    ours = csrf_token(request)
    return JsonResponse({"token": ours, "django": get_token(request)})


def token_only(request: HttpRequest) -> JsonResponse:
    """csrf_token() without touching Django's get_token()."""
    return JsonResponse({"token": csrf_token(request)})


async def async_token_only(request: HttpRequest) -> JsonResponse:
    """csrf_token() in an async view."""
    return JsonResponse({"token": csrf_token(request)})


def plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse("plain", content_type="text/plain")


async def async_plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse("async plain", content_type="text/plain")


def own_headers(request: HttpRequest) -> HttpResponse:
    response = HttpResponse("own", content_type="text/plain")
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["Referrer-Policy"] = "no-referrer"
    response["Content-Security-Policy"] = "default-src 'none'"
    response["X-Content-Type-Options"] = "custom"
    return response


def exempt_hooks(request: HttpRequest) -> bool:
    """CSRF_EXEMPT predicate used by the tests: only /sec/hooks/... is exempt."""
    return request.path.startswith("/sec/hooks/")


NOT_CALLABLE = {"this": "is not a function"}


@csrf_exempt
async def async_exempt_plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse("exempt", content_type="text/plain")
