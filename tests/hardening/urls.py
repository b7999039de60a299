"""Test-only views for the hardening tests, next to the demo project's routes."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.clickjacking import xframe_options_exempt

from appframework.auth import current_user
from testproject.urls import urlpatterns as project_urlpatterns


@xframe_options_exempt
def framable(request: HttpRequest) -> HttpResponse:
    return HttpResponse("may be framed")


async def async_whoami(request: HttpRequest) -> JsonResponse:
    user = await current_user(request)
    return JsonResponse({"user": user.email if user else None})


def deep_json(request: HttpRequest) -> HttpResponse:
    return HttpResponse(json.dumps({"ok": True}), content_type="application/json")


urlpatterns = [
    path("hardening/framable", framable),
    path("hardening/whoami", async_whoami),
    *project_urlpatterns,
]
