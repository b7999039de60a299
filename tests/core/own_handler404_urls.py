"""URLconf for tests/core/test_error_format_custom_handlers.py: a project with its own
``handler404`` (a distinctive page), plus a test middleware that switches the request's
URLconf (``request.urlconf``) to the module named in ``X-Urlconf``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound, JsonResponse
from django.urls import path

#: Appears only in the project's own 404 page.
OWN_404_MARKER = "our-own-lost-page-4f1c9e"


def own_page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return HttpResponseNotFound(
        f'<!doctype html><html lang="en"><title>Lost</title><p>{OWN_404_MARKER}</p></html>',
        content_type="text/html; charset=utf-8",
    )


handler404 = own_page_not_found


def ok(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"ok": True})


def urlconf_from_header(get_response: Callable[[HttpRequest], Any]) -> Callable[..., Any]:
    """Test middleware: ``request.urlconf = <X-Urlconf>`` when the header is sent."""

    def middleware(request: HttpRequest) -> Any:
        urlconf = request.headers.get("X-Urlconf")
        if urlconf:
            request.urlconf = urlconf  # type: ignore[attr-defined]
        return get_response(request)

    return middleware


urlpatterns = [path("h/ok", ok)]
