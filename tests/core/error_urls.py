"""URLconf for tests/core/test_error_format.py: views that raise every kind of error,
sync and async, with the suite's handlers for errors raised outside any view.

``/e/sync/raise/<kind>`` and ``/e/async/raise/<kind>`` raise ``RAISERS[kind]()``;
``.../get-only`` is under ``require_http_methods(["GET"])``; ``.../crash`` raises a plain
RuntimeError carrying ``SECRET``; ``.../read-body`` reads the request body. The
GraphQL endpoint is included too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views import View
from django.views.decorators.http import require_http_methods

from appframework.exceptions import (
    BadRequestException,
    ForbiddenException,
    MethodNotAllowedException,
    NotFoundException,
    PayloadTooLargeException,
    TooManyRequestsException,
    UnauthorizedException,
    UnsupportedMediaTypeException,
    ValidationException,
)

handler400 = "appframework.views.bad_request"
handler403 = "appframework.views.permission_denied"
handler404 = "appframework.views.page_not_found"
handler500 = "appframework.views.server_error"

#: Text put in Django's exceptions and the crash: written for developers, never shown.
SECRET = "internal-detail-/srv/app/settings.py-do-not-leak"

RAISERS: dict[str, Callable[[], Exception]] = {
    "unauthorized": lambda: UnauthorizedException(
        "Log in first.", www_authenticate='Bearer realm="api"'
    ),
    "unauthorized-no-challenge": lambda: UnauthorizedException(),
    "forbidden": lambda: ForbiddenException(),
    "bad-request": lambda: BadRequestException(),
    "not-found": lambda: NotFoundException(),
    "method-not-allowed": lambda: MethodNotAllowedException(allow="GET"),
    "payload-too-large": lambda: PayloadTooLargeException(),
    "unsupported-media-type": lambda: UnsupportedMediaTypeException(),
    "validation": lambda: ValidationException(),
    "too-many": lambda: TooManyRequestsException(retry_after=2),
    "django-http404": lambda: Http404(SECRET),
    "django-permission-denied": lambda: PermissionDenied(SECRET),
    "django-suspicious-operation": lambda: SuspiciousOperation(SECRET),
    "django-bad-request": lambda: BadRequest(SECRET),
    "django-request-data-too-big": lambda: RequestDataTooBig(SECRET),
}


def raise_sync(request: HttpRequest, kind: str) -> HttpResponse:
    raise RAISERS[kind]()


async def raise_async(request: HttpRequest, kind: str) -> HttpResponse:
    raise RAISERS[kind]()


@require_http_methods(["GET"])
def get_only_sync(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"ok": True})


@require_http_methods(["GET"])
async def get_only_async(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"ok": True})


class GetOnlyView(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return JsonResponse({"ok": True})


def crash_sync(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(SECRET)


async def crash_async(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(SECRET)


def read_body_sync(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"length": len(request.body)})


async def read_body_async(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"length": len(request.body)})


def own_404_sync(request: HttpRequest) -> HttpResponse:
    """A view that answers 404 itself, in its own format."""
    return JsonResponse({"detail": "no such post"}, status=404)


async def own_404_async(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"detail": "no such post"}, status=404)


def ok(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"ok": True})


def raise_in_middleware(get_response: Callable[[HttpRequest], Any]) -> Callable[..., Any]:
    """Test middleware: raises ``RAISERS[X-Raise]()`` (or the crash) before any view."""

    def middleware(request: HttpRequest) -> Any:
        kind = request.headers.get("X-Raise")
        if kind == "crash":
            raise RuntimeError(SECRET)
        if kind:
            raise RAISERS[kind]()
        return get_response(request)

    return middleware


urlpatterns = [
    path("e/sync/raise/<str:kind>", raise_sync),
    path("e/async/raise/<str:kind>", raise_async),
    path("e/sync/get-only", get_only_sync),
    path("e/async/get-only", get_only_async),
    path("e/class/get-only", GetOnlyView.as_view()),
    path("e/sync/crash", crash_sync),
    path("e/async/crash", crash_async),
    path("e/sync/read-body", read_body_sync),
    path("e/async/read-body", read_body_async),
    path("e/sync/own-404", own_404_sync),
    path("e/async/own-404", own_404_async),
    path("e/ok", ok),
    path("", include("appframework_graphql.urls")),
]
