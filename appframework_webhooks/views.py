"""The event catalogue served as JSON (``GET``; ``appframework_webhooks.urls``)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from .catalogue import catalogue

__all__ = ["event_catalogue_view"]


@require_safe
def event_catalogue_view(request: HttpRequest) -> JsonResponse:
    """``{"events": [{"name", "description", "schema"}]}``, sorted by name: what customers
    may subscribe to and what each event's ``data`` holds (JSON Schema)."""
    return JsonResponse(catalogue.as_json(), json_dumps_params={"ensure_ascii": False})
